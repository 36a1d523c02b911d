/**
 * Issue 10's hostile names against the IPVS batches: names from the API never reach ipvsadm or
 * ipset text (neither format carries a name; set comments are upstream's constants), so a hostile
 * Service renders exactly the benign one's batches; and values that are not canonical (an address
 * with a newline, a port out of range) are refused before any text is written.
 */
import { BENIGN_NAME, HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { UnsafeRestoreTextError, type Endpoint, type ServicePort } from '@kube-proxy/core';
import { makeService, TestCluster } from '../testing/ipvs-fixtures.js';
import { diffDesiredStates } from './diff-batches.js';
import { renderIpsetRestore, renderIpvsadmRestore } from './render-batches.js';

function named(namespace: string, name: string, port: string): TestCluster {
  const c = new TestCluster();
  const [p] = c.service(makeService('default', 'placeholder', (svc) => {
    svc.spec.type = 'LoadBalancer';
    svc.spec.clusterIP = '10.96.0.10';
    svc.spec.externalIPs = ['50.60.70.81'];
    svc.spec.externalTrafficPolicy = 'Local';
    svc.spec.healthCheckNodePort = 32000;
    svc.spec.loadBalancerSourceRanges = ['100.101.0.0/16'];
    svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }];
    svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
  }));
  // Bypass the source edge's validation: the name goes straight into the service map.
  c.serviceMap.clear();
  const key = port === '' ? `${namespace}/${name}` : `${namespace}/${name}:${port}`;
  c.serviceMap.set(key, { ...p, name: { namespace, name, port, protocol: 'TCP', key } });
  c.endpoints(key, [{ ip: '10.244.1.5', port: 8080, nodeName: 'test-hostname' }, { ip: '10.244.2.6', port: 8080 }]);
  return c;
}

describe('IPVS batches with hostile names', () => {
  const benign = named(BENIGN_NAME.namespace, BENIGN_NAME.name, BENIGN_NAME.port).state();
  const benignIpvsadm = renderIpvsadmRestore(benign);
  const benignIpset = renderIpsetRestore(benign);

  it('the benign service renders a full batch', () => {
    expect(benignIpvsadm.split('\n').filter((l) => l.startsWith('-A '))).toHaveLength(4);
    expect(benignIpset).toContain('add KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,tcp:80,100.101.0.0/16\n');
  });

  it.each(HOSTILE_NAMES.map((h) => [h.label, h] as const))('%s: exactly the benign batches', (_label, h) => {
    const state = named(h.namespace, h.name, h.port).state();
    expect(renderIpvsadmRestore(state)).toBe(benignIpvsadm);
    expect(renderIpsetRestore(state)).toBe(benignIpset);
    expect(diffDesiredStates(benign, state)).toEqual({ ipvsadm: '', ipset: '' });
  });

  function withPort(patch: Partial<ServicePort>): TestCluster {
    const c = named('default', 'web', 'http');
    c.serviceMap.forEach((p, k) => c.serviceMap.set(k, { ...p, ...patch }));
    return c;
  }
  function withEndpoint(patch: Partial<Endpoint>): TestCluster {
    const c = named('default', 'web', 'http');
    c.endpointsMap.forEach((eps, k) => c.endpointsMap.set(k, [{ ...eps[0], ...patch }, ...eps.slice(1)]));
    return c;
  }

  it.each([
    ['a cluster IP with a newline', withPort({ clusterIP: '10.96.0.10\n-A -t 1.1.1.1:1 -s rr' })],
    ['a non-canonical cluster IP', withPort({ clusterIP: '10.096.0.10' })],
    ['an external IP with a space', withPort({ externalIPs: ['50.60.70.81 -s rr'] })],
    ['a load-balancer IP of the other family', withPort({ loadBalancerVIPs: ['2001:db8::1'] })],
    ['a source range with a newline', withPort({ loadBalancerSourceRanges: ['10.0.0.0/8\nadd X 1'] })],
    ['a port out of range', withPort({ port: 70000 })],
    ['a node port that is not an integer', withPort({ nodePort: 3.5 })],
    ['an unknown protocol', withPort({ protocol: 'ICMP' as never })],
    ['an endpoint IP with a newline', withEndpoint({ ip: '10.244.1.5\n-a -t 1.1.1.1:1' })],
    ['an endpoint port of 0', withEndpoint({ port: 0 })],
  ])('refuses %s before writing any text', (_label, c) => {
    expect(() => c.state()).toThrow(UnsafeRestoreTextError);
  });
});
