// The no-local-endpoints gauge (upstream's TestNoEndpointsMetric) and a failed transaction
// (upstream counts sync_proxy_rules_nftables_sync_failures_total; its fake nft has no failure test).
import { makeTestEndpointSlice, makeTestService, newFakeProxier, normalizedLines, TEST_NODE_IPS, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { tracePacket } from '../testing/packet-flow.js';

describe('nftables proxier metrics', () => {
  const threeEndpoints = (nodes: string[]) =>
    makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
      eps.addressType = 'IPv4';
      eps.ports = [{ name: '', port: 80, protocol: 'TCP' }];
      eps.endpoints = nodes.map((nodeName, i) => ({ addresses: [`10.0.1.${i + 1}`], conditions: { ready: true }, nodeName }));
    });
  const local = [TEST_NODE_NAME, 'node1', 'node2'];
  const remote = ['node0', 'node1', 'node2'];

  // Ports upstream's TestNoEndpointsMetric (sync_proxy_rules_no_local_endpoints_total{internal,external}).
  it.each([
    { name: 'internalTrafficPolicy is set and there are local endpoints', itp: 'Local', etp: undefined, nodes: local, internal: 0, external: 0 },
    { name: 'externalTrafficPolicy is set and there are local endpoints', itp: undefined, etp: 'Local', nodes: local, internal: 0, external: 0 },
    { name: 'both policies are set and there are local endpoints', itp: 'Local', etp: 'Local', nodes: local, internal: 0, external: 0 },
    { name: 'internalTrafficPolicy is set and there are no local endpoints', itp: 'Local', etp: undefined, nodes: remote, internal: 1, external: 0 },
    { name: 'externalTrafficPolicy is set and there are no local endpoints', itp: undefined, etp: 'Local', nodes: remote, internal: 0, external: 1 },
    { name: 'both policies are set and there are no local endpoints', itp: 'Local', etp: 'Local', nodes: remote, internal: 1, external: 1 },
    { name: 'both policies are set and there are no endpoints at all', itp: 'Local', etp: 'Local', nodes: [], internal: 0, external: 0 },
  ])('$name', async ({ itp, etp, nodes, internal, external }) => {
    const { proxier } = newFakeProxier();
    proxier.onServiceAdd(
      makeTestService('ns1', 'svc1', (s) =>
        Object.assign(s.spec, {
          clusterIP: '172.30.1.1',
          selector: { foo: 'bar' },
          ports: [{ name: '', port: 80, protocol: 'TCP', nodePort: 123 }],
          ...(itp ? { internalTrafficPolicy: itp } : {}),
          ...(etp ? { type: 'NodePort', externalTrafficPolicy: etp } : {}),
        }),
      ),
    );
    proxier.onEndpointSliceAdd(threeEndpoints(nodes));
    await proxier.syncProxyRules();
    expect(proxier.stats.noLocalEndpoints).toEqual({ internal, external });
  });
});

describe('nftables proxier failures', () => {
  it('counts a failed transaction, leaves the table as it was, and repairs it on the next sync', async () => {
    const { proxier, nft } = newFakeProxier();
    const svc = makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }));
    proxier.onServiceAdd(svc);
    const slice = (ip: string) =>
      makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
        eps.addressType = 'IPv4';
        eps.endpoints = [{ addresses: [ip] }];
        eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      });
    const first = slice('10.180.0.1');
    proxier.onEndpointSliceAdd(first);
    await proxier.syncProxyRules();
    const good = nft.table.dump();
    const trace = () => tracePacket(nft.table, { sourceIP: '10.0.0.2', protocol: 'tcp', destIP: '172.30.0.41', destPort: 80 }, TEST_NODE_IPS).output;
    expect(trace()).toBe('10.180.0.1:80');

    const second = slice('10.180.0.2');
    proxier.onEndpointSliceUpdate(first, second);
    nft.failNext = 'boom';
    await proxier.syncProxyRules();
    expect(proxier.stats.transactionFailures).toBe(1);
    expect(nft.table.dump()).toBe(good);
    expect(trace()).toBe('10.180.0.1:80');

    // The change trackers were drained by the failed sync: the next (full) one still applies it.
    const syncsBefore = proxier.stats.fullSyncs;
    await proxier.syncProxyRules();
    expect(proxier.stats.transactionFailures).toBe(1);
    expect(proxier.stats.fullSyncs).toBe(syncsBefore + 1);
    expect(trace()).toBe('10.180.0.2:80');
    expect(normalizedLines(nft.table.dump())).not.toContain('add rule ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 meta l4proto tcp dnat to 10.180.0.1:80');
  });
});
