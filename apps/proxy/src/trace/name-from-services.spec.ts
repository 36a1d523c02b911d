import type { PacketTrace, TracePacket, V1Service } from '@kube-proxy/core';
import { nameFromServices } from './name-from-services.js';
import type { TraceAnswer } from './run-trace.js';

const svc: V1Service = {
  metadata: { namespace: 'ns', name: 'web' },
  spec: {
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    externalIPs: ['192.0.2.7'],
    ports: [
      { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
      { port: 53, protocol: 'UDP' },
    ],
  },
  status: { loadBalancer: { ingress: [{ ip: '203.0.113.9' }] } },
};

function answer(destIP: string, destPort: number, protocol: 'TCP' | 'UDP', trace: Partial<PacketTrace> = {}): TraceAnswer {
  const packet: TracePacket = { family: 'IPv4', protocol, sourceIP: '10.244.1.5', destIP, destPort, locallyGenerated: false };
  const full: PacketTrace = { verdict: 'DNAT', endpoints: ['10.244.1.11:8080'], choices: [], masquerade: false, masqueradeReason: '', service: null, path: [], reason: 'r', ...trace };
  return { packet, trace: full, origin: { mode: 'ipvs', family: 'IPv4', source: '--dry-run output' } };
}

describe('nameFromServices', () => {
  it.each([
    ['10.96.0.10', 80, 'TCP', 'ns/web:http'],
    ['192.0.2.7', 80, 'TCP', 'ns/web:http'],
    ['203.0.113.9', 80, 'TCP', 'ns/web:http'],
    ['192.168.49.2', 30080, 'TCP', 'ns/web:http'],
    ['10.96.0.10', 53, 'UDP', 'ns/web:'],
  ] as const)('names %s:%d/%s as %s and says so on the path', (ip, port, protocol, named) => {
    const got = nameFromServices(answer(ip, port, protocol), [svc], ['192.168.49.2']);
    expect(got.trace.service).toBe(named);
    expect(got.trace.path.at(-1)).toMatchObject({ where: 'Service objects', service: named });
  });

  it('leaves a named trace, an ACCEPT, another port and a NodePort on a foreign address alone', () => {
    expect(nameFromServices(answer('10.96.0.10', 80, 'TCP', { service: 'x/y:z' }), [svc], []).trace.service).toBe('x/y:z');
    expect(nameFromServices(answer('10.96.0.10', 80, 'TCP', { verdict: 'ACCEPT' }), [svc], []).trace.service).toBeNull();
    expect(nameFromServices(answer('10.96.0.10', 81, 'TCP'), [svc], []).trace.service).toBeNull();
    expect(nameFromServices(answer('10.96.0.10', 80, 'UDP'), [svc], []).trace.service).toBeNull();
    expect(nameFromServices(answer('192.168.77.1', 30080, 'TCP'), [svc], ['192.168.49.2']).trace.service).toBeNull();
  });
});
