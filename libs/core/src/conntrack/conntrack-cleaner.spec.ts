import type { ServicePort } from '../semantics/model/service-port.js';
import { servicePortName } from '../semantics/model/service-port-name.js';
import { testServicePort } from '../testing/test-service-port.js';
import { FakeCommandExecutor, RecordingLogger } from '../testing/host-fakes.js';
import type { AppliedChanges, ServicePortMap } from '../semantics/tracking/types.js';
import { ConntrackCleaner, endpointIP } from './conntrack-cleaner.js';

function udpPort(spec: { ns: string; svc: string; portName?: string } & Partial<Omit<ServicePort, 'name'>>): ServicePort {
  const { ns, svc, portName, ...overrides } = spec;
  return testServicePort({
    name: servicePortName(ns, svc, portName ?? 'dns', 'UDP'),
    clusterIP: '10.96.0.53',
    port: 53,
    protocol: 'UDP',
    ...overrides,
  });
}

function changes(partial: {
  deletedUDPClusterIPs?: string[];
  deletedUDPEndpoints?: { endpoint: string; svc: ServicePort }[];
  newlyActive?: ServicePort[];
}): AppliedChanges {
  return {
    services: { updatedServices: new Set(), deletedUDPClusterIPs: new Set(partial.deletedUDPClusterIPs ?? []) },
    endpoints: {
      updatedServices: new Set(),
      deletedUDPEndpoints: (partial.deletedUDPEndpoints ?? []).map((d) => ({
        endpoint: d.endpoint,
        servicePortName: d.svc.name,
      })),
      newlyActiveUDPServices: (partial.newlyActive ?? []).map((s) => s.name),
      lastChangeTriggerTimes: new Map(),
    },
  };
}

function mapOf(...ports: ServicePort[]): ServicePortMap {
  return new Map(ports.map((p) => [p.name.key, p]));
}

describe('endpointIP', () => {
  it('strips the port, IPv6 brackets included', () => {
    expect(endpointIP('10.1.2.3:53')).toBe('10.1.2.3');
    expect(endpointIP('[fd00::5]:53')).toBe('fd00::5');
  });
});

describe('ConntrackCleaner', () => {
  it('deletes flows DNATed to a removed UDP endpoint, for cluster IP, external IPs, LB IPs and NodePort', async () => {
    const svc = udpPort({
      ns: 'default',
      svc: 'dns',
      nodePort: 30053,
      externalIPs: ['192.168.1.10'],
      loadBalancerVIPs: ['1.2.3.4'],
      externallyAccessible: true,
    });
    const exec = new FakeCommandExecutor().setDefault({});
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: exec, logger: new RecordingLogger() });
    await cleaner.cleanStaleEntries(mapOf(svc), changes({ deletedUDPEndpoints: [{ endpoint: '10.244.1.11:5353', svc }] }));
    expect(exec.commandLines()).toEqual([
      'conntrack -D -p udp --orig-port-dst 30053 --dst-nat 10.244.1.11',
      'conntrack -D --orig-dst 10.96.0.53 --dst-nat 10.244.1.11 -p udp',
      'conntrack -D --orig-dst 192.168.1.10 --dst-nat 10.244.1.11 -p udp',
      'conntrack -D --orig-dst 1.2.3.4 --dst-nat 10.244.1.11 -p udp',
    ]);
  });

  it('deletes flows to deleted UDP cluster IPs and to newly active UDP services (no NAT yet)', async () => {
    const svc = udpPort({ ns: 'default', svc: 'dns2', clusterIP: '10.96.0.54', nodePort: 30054, externalIPs: ['192.168.1.11'] });
    const exec = new FakeCommandExecutor().setDefault({});
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: exec, logger: new RecordingLogger() });
    await cleaner.cleanStaleEntries(mapOf(svc), changes({ deletedUDPClusterIPs: ['10.96.0.99'], newlyActive: [svc] }));
    expect(exec.commandLines()).toEqual([
      'conntrack -D --orig-dst 10.96.0.99 -p udp',
      'conntrack -D --orig-dst 10.96.0.54 -p udp',
      'conntrack -D --orig-dst 192.168.1.11 -p udp',
      'conntrack -D -p udp --orig-port-dst 30054',
    ]);
  });

  it('adds -f ipv6 for IPv6', async () => {
    const svc = udpPort({ ns: 'default', svc: 'dns', clusterIP: 'fd00:10:96::a', family: 'IPv6' });
    const exec = new FakeCommandExecutor().setDefault({});
    const cleaner = new ConntrackCleaner({ family: 'IPv6', executor: exec, logger: new RecordingLogger() });
    await cleaner.cleanStaleEntries(mapOf(svc), changes({ deletedUDPEndpoints: [{ endpoint: '[fd00::11]:53', svc }] }));
    expect(exec.commandLines()).toEqual(['conntrack -D --orig-dst fd00:10:96::a --dst-nat fd00::11 -p udp -f ipv6']);
  });

  it('skips endpoints of services that are gone', async () => {
    const svc = udpPort({ ns: 'default', svc: 'gone' });
    const exec = new FakeCommandExecutor().setDefault({});
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: exec, logger: new RecordingLogger() });
    await cleaner.cleanStaleEntries(new Map(), changes({ deletedUDPEndpoints: [{ endpoint: '10.0.0.1:53', svc }] }));
    expect(exec.calls).toHaveLength(0);
  });

  it('treats "0 flow entries have been deleted" as success and logs real failures', async () => {
    const svc = udpPort({ ns: 'default', svc: 'dns' });
    const logger = new RecordingLogger();
    const exec = new FakeCommandExecutor().setDefault({
      exitCode: 1,
      stderr: 'conntrack v1.4.7 (conntrack-tools): 0 flow entries have been deleted.\n',
    });
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: exec, logger });
    await cleaner.cleanStaleEntries(mapOf(svc), changes({ deletedUDPClusterIPs: ['10.96.0.99'] }));
    expect(logger.messages('error')).toEqual([]);

    exec.setDefault({ exitCode: 2, stderr: 'conntrack v1.4.7 (conntrack-tools): Operation failed: invalid parameters' });
    await cleaner.cleanStaleEntries(mapOf(svc), changes({ deletedUDPClusterIPs: ['10.96.0.99'] }));
    expect(logger.has('error', 'Failed to delete stale conntrack entries')).toBe(true);
  });

  it('logs a missing conntrack binary once', async () => {
    const svc = udpPort({ ns: 'default', svc: 'dns' });
    const logger = new RecordingLogger();
    const exec = new FakeCommandExecutor();
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: exec, logger });
    await cleaner.cleanStaleEntries(mapOf(svc), changes({ deletedUDPClusterIPs: ['10.96.0.98', '10.96.0.99'] }));
    expect(logger.messages('error')).toHaveLength(1);
  });
});
