/**
 * Issue 10's hostile names against the IPVS iptables skeleton: no name from the API reaches the
 * payload (its only comments are upstream's constants), so a hostile Service renders exactly the
 * benign one's payload; and a state whose set entries are not canonical text (one built by hand,
 * bypassing the state builder's guards) is refused before any text is written.
 */
import { BENIGN_NAME, HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import type { DesiredIpvsState } from '../state/ipvs-state.js';
import { makeService, TestCluster } from '../testing/ipvs-fixtures.js';
import { renderIpvsIptables } from './render-ipvs-iptables.js';

const OPTIONS = { family: 'IPv4', masqueradeBit: 14, masqueradeAll: false, localDetector: { kind: 'cidr', cidr: '10.244.0.0/16' }, randomFully: true } as const;

function named(namespace: string, name: string, port: string): DesiredIpvsState {
  const c = new TestCluster();
  const [p] = c.service(makeService('default', 'placeholder', (svc) => {
    svc.spec.type = 'LoadBalancer';
    svc.spec.clusterIP = '10.96.0.10';
    svc.spec.externalIPs = ['50.60.70.81'];
    svc.spec.externalTrafficPolicy = 'Local';
    svc.spec.healthCheckNodePort = 32000;
    svc.spec.loadBalancerSourceRanges = ['100.101.0.0/16', '198.51.100.0/24'];
    svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }];
    svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
  }));
  // Bypass the source edge's validation: the name goes straight into the service map.
  c.serviceMap.clear();
  const key = port === '' ? `${namespace}/${name}` : `${namespace}/${name}:${port}`;
  c.serviceMap.set(key, { ...p, name: { namespace, name, port, protocol: 'TCP', key } });
  c.endpoints(key, [{ ip: '10.244.1.5', port: 8080, nodeName: 'test-hostname' }, { ip: '10.244.2.6', port: 8080 }]);
  return c.state();
}

/** The state with one set's entries replaced. */
function withEntries(state: DesiredIpvsState, setName: string, entries: string[]): DesiredIpvsState {
  return { ...state, ipsets: state.ipsets.map((s) => (s.set.name === setName ? { ...s, entries } : s)) };
}

describe('the IPVS iptables skeleton with hostile names', () => {
  const benign = renderIpvsIptables(named(BENIGN_NAME.namespace, BENIGN_NAME.name, BENIGN_NAME.port), OPTIONS).payload;

  it('the benign service renders every concern (LB, Local policy, firewall, external IPs, hairpin)', () => {
    for (const set of ['KUBE-LOAD-BALANCER-LOCAL', 'KUBE-LOAD-BALANCER-FW', 'KUBE-LOAD-BALANCER-SOURCE-IP', 'KUBE-EXTERNAL-IP-LOCAL', 'KUBE-LOOP-BACK', 'KUBE-NODE-PORT-LOCAL-TCP']) {
      expect(benign).toContain(`--match-set ${set} `);
    }
  });

  it.each(HOSTILE_NAMES.map((h) => [h.label, h] as const))('%s: exactly the benign payload', (_label, h) => {
    expect(renderIpvsIptables(named(h.namespace, h.name, h.port), OPTIONS).payload).toBe(benign);
  });

  const base = named('default', 'web', 'http');
  it.each([
    ['a firewalled LB entry with a newline', withEntries(base, 'KUBE-LOAD-BALANCER-FW', ['1.2.3.4,tcp:80\n-A KUBE-IPVS-OUT-FILTER -j ACCEPT'])],
    ['a firewalled LB entry with a space', withEntries(base, 'KUBE-LOAD-BALANCER-FW', ['1.2.3.4 -j ACCEPT,tcp:80'])],
    ['a firewalled LB entry with a non-canonical address', withEntries(base, 'KUBE-LOAD-BALANCER-FW', ['01.2.3.4,tcp:80'])],
    ['a firewalled LB entry of the other family', withEntries(base, 'KUBE-LOAD-BALANCER-FW', ['2001:db8::1,tcp:80'])],
    ['a firewalled LB entry with port 0', withEntries(base, 'KUBE-LOAD-BALANCER-FW', ['1.2.3.4,tcp:0'])],
    ['a set of the other family', { ...base, ipsets: base.ipsets.map((s, i) => (i === 0 ? { ...s, set: { ...s.set, family: 'IPv6' as const } } : s)) }],
    ['a set whose name is not the catalogue\'s', { ...base, ipsets: base.ipsets.map((s, i) => (i === 1 ? { ...s, set: { ...s.set, name: 'KUBE-CLUSTER-IP dst,dst -j ACCEPT\n' } } : s)) }],
  ])('refuses %s', (_label, state) => {
    expect(() => renderIpvsIptables(state, OPTIONS)).toThrow(UnsafeRestoreTextError);
  });
});
