// Ported from upstream's pkg/proxy/nftables/proxier_test.go TestOverallNFTablesRules at kubernetes
// commit edca5633aa54f69d9fa50f526fe3a8cabda69c91 (v1.36+ layout): the same services and slices, and
// the same expected dump (compared after sorting, as upstream normalises), with v1.37's single-endpoint
// DNAT (kubernetes PR #140723 / #140960, see testing/upstream-v137.ts).
import { readFileSync } from 'node:fs';
import { BASE_RULES } from '../testing/base-rules.js';
import { withSingleEndpointDnat } from '../testing/upstream-v137.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, normalizedLines, TEST_NODE_NAME } from '../testing/fake-proxier.js';

/** Upstream's verbatim expected table (baseRules + expected), kept as the tracer's fixture too. */
const UPSTREAM_OVERALL = readFileSync(new URL('../trace/fixtures/upstream-v1.36-overall.nft', import.meta.url), 'utf8');

const tcp80 = (extra: Record<string, unknown> = {}) => [{ name: 'p80', port: 80, protocol: 'TCP', ...extra }];
const sliceWith = (ns: string, name: string, endpoints: Array<{ ip: string; local?: boolean }>) =>
  makeTestEndpointSlice(ns, name, 1, (eps) => {
    eps.addressType = 'IPv4';
    eps.endpoints = endpoints.map((e) => ({ addresses: [e.ip], ...(e.local ? { nodeName: TEST_NODE_NAME } : {}) }));
    eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
  });

describe('nftables proxier: TestOverallNFTablesRules', () => {
  it('writes upstream\'s dump for ClusterIP, LoadBalancer (Local and Cluster, source ranges, affinity), NodePort, ExternalIP and endpoint-less services', async () => {
    const { proxier, nft } = newFakeProxier('IPv4');
    const services = [
      makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: tcp80() })),
      makeTestService('ns2', 'svc2', (s) => {
        Object.assign(s.spec, { type: 'LoadBalancer', externalTrafficPolicy: 'Local', clusterIP: '172.30.0.42', ports: tcp80({ nodePort: 3001 }), externalIPs: ['192.168.99.22'], healthCheckNodePort: 30000 });
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
      }),
      makeTestService('ns3', 'svc3', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: '172.30.0.43', ports: tcp80({ nodePort: 3003 }) })),
      makeTestService('ns4', 'svc4', (s) => Object.assign(s.spec, { type: 'NodePort', clusterIP: '172.30.0.44', externalIPs: ['192.168.99.33'], ports: tcp80({ targetPort: 80 }) })),
      makeTestService('ns5', 'svc5', (s) => {
        Object.assign(s.spec, {
          type: 'LoadBalancer',
          externalTrafficPolicy: 'Cluster',
          clusterIP: '172.30.0.45',
          ports: tcp80({ nodePort: 3002 }),
          healthCheckNodePort: 30000,
          loadBalancerSourceRanges: [' 203.0.113.0/25'],
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        });
        s.status.loadBalancer = { ingress: [{ ip: '5.6.7.8' }] };
      }),
      makeTestService('ns6', 'svc6', (s) => Object.assign(s.spec, { type: 'ClusterIP', clusterIP: '172.30.0.46', ports: tcp80({ targetPort: 80 }) })),
    ];
    for (const s of services) proxier.onServiceAdd(s);
    for (const eps of [
      sliceWith('ns1', 'svc1', [{ ip: '10.180.0.1', local: true }]),
      sliceWith('ns2', 'svc2', [{ ip: '10.180.0.2' }]),
      sliceWith('ns3', 'svc3', [{ ip: '10.180.0.3', local: true }]),
      sliceWith('ns4', 'svc4', [{ ip: '10.180.0.4' }, { ip: '10.180.0.5', local: true }]),
      sliceWith('ns5', 'svc5', [{ ip: '10.180.0.3', local: true }]),
    ]) proxier.onEndpointSliceAdd(eps);

    await proxier.syncProxyRules();

    expect(normalizedLines(nft.table.dump())).toEqual(normalizedLines(withSingleEndpointDnat(UPSTREAM_OVERALL)));
    // The fixture's baseRules are upstream's, line for line ours.
    for (const line of normalizedLines(BASE_RULES)) expect(normalizedLines(UPSTREAM_OVERALL)).toContain(line);
  });
});
