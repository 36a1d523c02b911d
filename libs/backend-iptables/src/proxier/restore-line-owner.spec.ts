import type { Endpoint, ServicePort } from '@kube-proxy/core';
import { servicePortEndpointChainName, servicePortPolicyClusterChain, serviceFirewallChainName } from '../render/index.js';
import { ownerOfRestoreLine } from './restore-line-owner.js';

const port = (): ServicePort => ({ protocol: 'TCP' }) as ServicePort;
const serviceMap = new Map<string, ServicePort>([
  ['ns/a:http', port()],
  ['ns/b:http', port()],
]);
const endpointsMap = new Map<string, Endpoint[]>([['ns/b:http', [{ key: '10.244.1.2:8080' } as Endpoint]]]);

describe('ownerOfRestoreLine', () => {
  it('finds the service port of a chain it declares, appends to or jumps to', () => {
    const svcB = servicePortPolicyClusterChain('ns/b:http', 'TCP');
    expect(ownerOfRestoreLine(`:${svcB} - [0:0]`, serviceMap, endpointsMap)).toBe('ns/b:http');
    expect(ownerOfRestoreLine(`-A KUBE-SERVICES -d 10.96.0.2/32 -p tcp -m tcp --dport 80 -j ${svcB}`, serviceMap, endpointsMap)).toBe('ns/b:http');
    expect(ownerOfRestoreLine(`-A ${serviceFirewallChainName('ns/a:http', 'TCP')} -j KUBE-MARK-DROP`, serviceMap, endpointsMap)).toBe('ns/a:http');
  });

  it('finds an endpoint chain without a comment (large-cluster mode writes none)', () => {
    const sep = servicePortEndpointChainName('ns/b:http', 'TCP', '10.244.1.2:8080');
    expect(ownerOfRestoreLine(`-A ${sep} -s 10.244.1.2/32 -j KUBE-MARK-MASQ`, serviceMap, endpointsMap)).toBe('ns/b:http');
  });

  it('finds a rule of a shared chain by its comment, whole words only', () => {
    expect(ownerOfRestoreLine('-A KUBE-SERVICES -m comment --comment "ns/a:http has no endpoints" -j REJECT', serviceMap, endpointsMap)).toBe('ns/a:http');
    expect(ownerOfRestoreLine('-A KUBE-NODEPORTS -m comment --comment ns/a:http -m tcp -p tcp --dport 30001 -j ACCEPT', serviceMap, endpointsMap)).toBe('ns/a:http');
    expect(ownerOfRestoreLine('-A KUBE-SERVICES -m comment --comment "ns/a:httpx cluster IP" -j ACCEPT', serviceMap, endpointsMap)).toBeUndefined();
  });

  it('names no owner for the skeleton', () => {
    for (const line of ['*nat', 'COMMIT', ':KUBE-SERVICES - [0:0]', '-A KUBE-POSTROUTING -j MASQUERADE', '-A X -m comment --comment "unterminated']) {
      expect(ownerOfRestoreLine(line, serviceMap, endpointsMap)).toBeUndefined();
    }
  });
});
