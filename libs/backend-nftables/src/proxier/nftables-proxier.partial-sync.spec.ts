// Ported from upstream's TestSyncProxyRulesRepeated and TestSyncProxyRulesStartup
// (pkg/proxy/nftables/proxier_test.go at kubernetes commit edca5633aa54f69d9fa50f526fe3a8cabda69c91,
// the v1.36+ layout: no endpoint chains without session affinity, one hairpin-connections element
// per local endpoint), with v1.37's plain DNAT for single-endpoint services (kubernetes PR #140723 /
// #140960, testing/upstream-v137.ts): the table after each of a series of changes, and what each
// sync's transaction wrote. The dumps are upstream's. The operation counts are upstream's where they
// agree; ours are smaller where TableSync never flushes a chain it has just created (or one already
// flushed and waiting to be deleted), each such difference said at the step.
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { BASE_RULES } from '../testing/base-rules.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, normalizedLines, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { singleEndpointDnat } from '../testing/upstream-v137.js';

const P = 'ip kube-proxy';
const S1 = 'service-ULMVA6XW-ns1/svc1/tcp/p80';
const S2 = 'service-MHHHYRWA-ns2/svc2/tcp/p8080';
const S3 = 'service-4AT6LBPK-ns3/svc3/tcp/p80';
const S4 = 'service-LAUZTJTB-ns4/svc4/tcp/p80';

const clusterIP = (n: number, name: string, port: number) =>
  makeTestService(`ns${n}`, name, (s) => Object.assign(s.spec, { type: 'ClusterIP', clusterIP: `172.30.0.4${n}`, ports: [{ name: `p${port}`, port, protocol: 'TCP' }] }));
/** Upstream's slices here: every endpoint on this node. */
const slice = (n: number, port: number, ips: string[]) =>
  makeTestEndpointSlice(`ns${n}`, `svc${n}`, 1, (eps) => {
    eps.addressType = 'IPv4';
    eps.endpoints = ips.map((ip) => ({ addresses: [ip], nodeName: TEST_NODE_NAME }));
    eps.ports = [{ name: `p${port}`, port, protocol: 'TCP' }];
  });

/** A service chain as upstream's edca5633 dumps write it (`numgen … map`), in its v1.37 form. */
function serviceLines(svcChain: string, endpoints: Array<[ip: string, port: number]>): string[] {
  const map = endpoints.map(([ip, port], i) => `${i} : ${ip} . ${port}`).join(' , ');
  return [`add chain ${P} ${svcChain}`, singleEndpointDnat(`add rule ${P} ${svcChain} meta l4proto tcp dnat ip addr . port to numgen random mod ${endpoints.length} map { ${map} }`)];
}
const clusterIPElement = (ip: string) => `add element ${P} cluster-ips { ${ip} }`;
const serviceIPElement = (ip: string, port: number, chain: string) => `add element ${P} service-ips { ${ip} . tcp . ${port} : goto ${chain} }`;
const hairpin = (ip: string, port: number) => `add element ${P} hairpin-connections { ${ip} . ${ip} . tcp . ${port} }`;

describe('nftables partial syncs: TestSyncProxyRulesRepeated', () => {
  it('writes only what changed, flushes dropped chains at once and deletes them a second later', async () => {
    const { proxier, nft, clock } = newFakeProxier();
    const dump = () => normalizedLines(nft.table.dump());
    const expectTable = (lines: string[]) => expect(dump()).toEqual(normalizedLines(BASE_RULES + lines.join('\n')));
    const last = () => nft.transactions[nft.transactions.length - 1];
    const sync = async () => {
      const before = nft.transactions.length;
      await proxier.syncProxyRules();
      return nft.transactions.slice(before);
    };
    // Upstream ages fp.staleChains by two seconds; our stale-chain clock is the proxier's.
    const ageStaleChains = () => clock.advance(2000);

    const svc2: V1Service = clusterIP(2, 'svc2', 8080);
    proxier.onServiceAdd(clusterIP(1, 'svc1', 80));
    proxier.onServiceAdd(svc2);
    proxier.onEndpointSliceAdd(slice(1, 80, ['10.0.1.1']));
    proxier.onEndpointSliceAdd(slice(2, 8080, ['10.0.2.1']));
    await sync();
    const svc1Lines = [clusterIPElement('172.30.0.41'), serviceIPElement('172.30.0.41', 80, S1), hairpin('10.0.1.1', 80), ...serviceLines(S1, [['10.0.1.1', 80]])];
    const svc2Lines = [clusterIPElement('172.30.0.42'), serviceIPElement('172.30.0.42', 8080, S2), hairpin('10.0.2.1', 8080), ...serviceLines(S2, [['10.0.2.1', 8080]])];
    expectTable([...svc1Lines, ...svc2Lines]);

    // Add a new service and its endpoints.
    proxier.onServiceAdd(clusterIP(3, 'svc3', 80));
    let eps3: V1EndpointSlice = slice(3, 80, ['10.0.3.1']);
    proxier.onEndpointSliceAdd(eps3);
    await sync();
    const svc3Elements = [clusterIPElement('172.30.0.43'), serviceIPElement('172.30.0.43', 80, S3)];
    const svc3a = [...svc3Elements, hairpin('10.0.3.1', 80), ...serviceLines(S3, [['10.0.3.1', 80]])];
    expectTable([...svc1Lines, ...svc2Lines, ...svc3a]);
    // Upstream: 3 elements (cluster-ips, service-ips, hairpin-connections) + add+flush chain + 1 rule = 6. A new chain needs no flush: 5.
    expect(last().lines.slice().sort()).toEqual(svc3a.slice().sort());
    expect(last().size).toBe(5);

    // Delete a service: its chain is flushed, not yet deleted. Upstream: 3 element deletes + 1 flush, as ours.
    proxier.onServiceDelete(svc2);
    await sync();
    expectTable([...svc1Lines, `add chain ${P} ${S2}`, ...svc3a]);
    expect(last().counts()).toEqual({ 'delete element': 3, 'flush chain': 1 });
    expect([...proxier.tableState.staleChains.keys()]).toEqual([S2]);

    // A second later the stale chain goes, in a transaction of its own; the sync's own writes nothing.
    ageStaleChains();
    let txs = await sync();
    expectTable([...svc1Lines, ...svc3a]);
    // Upstream: the sync's own transaction has 0 operations. An empty transaction starts no nft here.
    expect(txs.map((t) => t.counts())).toEqual([{ 'delete chain': 1 }]);
    expect(proxier.stats.lastOperations).toBe(0);

    // Add a service, sync, then add its endpoints. Upstream: 2 operations, as ours.
    proxier.onServiceAdd(clusterIP(4, 'svc4', 80));
    await sync();
    const svc4NoEndpoints = [clusterIPElement('172.30.0.44'), `add element ${P} no-endpoint-services { 172.30.0.44 . tcp . 80 comment "ns4/svc4:p80" : goto reject-chain }`];
    expectTable([...svc1Lines, ...svc3a, ...svc4NoEndpoints]);
    expect(last().lines.slice().sort()).toEqual(svc4NoEndpoints.slice().sort());

    proxier.onEndpointSliceAdd(slice(4, 80, ['10.0.4.1']));
    await sync();
    const svc4Lines = [clusterIPElement('172.30.0.44'), serviceIPElement('172.30.0.44', 80, S4), hairpin('10.0.4.1', 80), ...serviceLines(S4, [['10.0.4.1', 80]])];
    expectTable([...svc1Lines, ...svc3a, ...svc4Lines]);
    // Upstream: 2 (service-ips add, no-endpoint-services delete) + 1 hairpin + add+flush chain + 1 rule = 6. Ours: no flush, 5.
    expect(last().counts()).toEqual({ 'delete element': 1, 'add element': 2, 'add chain': 1, 'add rule': 1 });

    // Change an endpoint of an existing service. Upstream: 2 hairpin changes + add+flush chain + 1 rule = 5, as ours.
    const eps3b = slice(3, 80, ['10.0.3.2']);
    proxier.onEndpointSliceUpdate(eps3, eps3b);
    eps3 = eps3b;
    await sync();
    const svc3b = [...svc3Elements, hairpin('10.0.3.2', 80), ...serviceLines(S3, [['10.0.3.2', 80]])];
    expectTable([...svc1Lines, ...svc3b, ...svc4Lines]);
    expect(last().counts()).toEqual({ 'delete element': 1, 'add element': 1, 'add chain': 1, 'flush chain': 1, 'add rule': 1 });
    // No endpoint chain went stale: there are none without affinity.
    expect(proxier.tableState.staleChains.size).toBe(0);

    // Add an endpoint. Upstream: 1 hairpin element + add+flush chain + 1 rule = 4, as ours.
    ageStaleChains();
    const eps3c = slice(3, 80, ['10.0.3.2', '10.0.3.3']);
    proxier.onEndpointSliceUpdate(eps3b, eps3c);
    txs = await sync();
    const svc3c = [...svc3Elements, hairpin('10.0.3.2', 80), hairpin('10.0.3.3', 80), ...serviceLines(S3, [['10.0.3.2', 80], ['10.0.3.3', 80]])];
    expectTable([...svc1Lines, ...svc3c, ...svc4Lines]);
    expect(txs).toHaveLength(1);
    expect(last().counts()).toEqual({ 'add element': 1, 'add chain': 1, 'flush chain': 1, 'add rule': 1 });

    // Empty the service's endpoints: its chain is flushed, not deleted. Upstream: 2 + 2 hairpin + 1 flush = 5, as ours.
    const eps3d = slice(3, 80, []);
    proxier.onEndpointSliceUpdate(eps3c, eps3d);
    await sync();
    const svc3NoEndpoints = [clusterIPElement('172.30.0.43'), `add element ${P} no-endpoint-services { 172.30.0.43 . tcp . 80 comment "ns3/svc3:p80" : goto reject-chain }`];
    expectTable([...svc1Lines, ...svc3NoEndpoints, `add chain ${P} ${S3}`, ...svc4Lines]);
    expect(last().counts()).toEqual({ 'delete element': 3, 'add element': 1, 'flush chain': 1 });
    expect([...proxier.tableState.staleChains.keys()]).toEqual([S3]);

    // Restore them at once: the chain is refilled and is stale no more.
    proxier.onEndpointSliceUpdate(eps3d, eps3c);
    await sync();
    const restored = [...svc1Lines, ...svc3c, ...svc4Lines];
    expectTable(restored);
    // Upstream: 2 + 2 hairpin + add+flush chain + 1 rule = 7. The flushed chain is empty: no second flush, 6.
    expect(last().counts()).toEqual({ 'delete element': 1, 'add element': 3, 'add chain': 1, 'add rule': 1 });
    expect(proxier.tableState.staleChains.size).toBe(0);

    // Empty them and restore them after the chain aged: deleted first, then recreated.
    proxier.onEndpointSliceUpdate(eps3c, eps3d);
    await sync();
    ageStaleChains();
    proxier.onEndpointSliceUpdate(eps3d, eps3c);
    txs = await sync();
    expectTable(restored);
    expect(txs[0].counts()).toEqual({ 'delete chain': 1 });

    // A sync with nothing to do writes nothing (upstream: a transaction of 0 operations).
    expect(await sync()).toEqual([]);
    expectTable(restored);
    expect(proxier.stats.lastOperations).toBe(0);
  });
});

describe('nftables partial syncs: TestSyncProxyRulesStartup', () => {
  it('turns a table left by an earlier process into upstream\'s table for the current services', async () => {
    const { proxier, nft } = newFakeProxier();
    const leftover = [
      ...BASE_RULES.split('\n').filter((l) => l.trim() !== ''),
      ...serviceLines(S1, [['10.0.1.1', 80]]),
      ...serviceLines(S2, [['10.0.2.1', 8080]]),
      clusterIPElement('172.30.0.41'),
      clusterIPElement('172.30.0.42'),
      serviceIPElement('172.30.0.41', 80, S1),
      serviceIPElement('172.30.0.42', 8080, S2),
      hairpin('10.0.1.1', 80),
      hairpin('10.0.2.1', 8080),
    ];
    // Declarations before use, as nft -f needs them.
    nft.table.run([...leftover.filter((l) => !l.startsWith('add rule') && !l.startsWith('add element')), ...leftover.filter((l) => l.startsWith('add rule')), ...leftover.filter((l) => l.startsWith('add element'))]);

    proxier.onServiceAdd(clusterIP(1, 'svc1', 80));
    proxier.onServiceAdd(clusterIP(2, 'svc2', 8080));
    proxier.onServiceAdd(clusterIP(3, 'svc3', 80));
    proxier.onEndpointSliceAdd(slice(1, 80, ['10.0.1.1', '10.0.1.2']));
    proxier.onEndpointSliceAdd(slice(2, 8080, ['10.0.2.1']));
    await proxier.syncProxyRules();

    expect(normalizedLines(nft.table.dump())).toEqual(
      normalizedLines(
        BASE_RULES +
          [
            clusterIPElement('172.30.0.41'),
            clusterIPElement('172.30.0.42'),
            clusterIPElement('172.30.0.43'),
            serviceIPElement('172.30.0.41', 80, S1),
            serviceIPElement('172.30.0.42', 8080, S2),
            `add element ${P} no-endpoint-services { 172.30.0.43 . tcp . 80 comment "ns3/svc3:p80" : goto reject-chain }`,
            hairpin('10.0.1.1', 80),
            hairpin('10.0.1.2', 80),
            hairpin('10.0.2.1', 8080),
            ...serviceLines(S1, [['10.0.1.1', 80], ['10.0.1.2', 80]]),
            ...serviceLines(S2, [['10.0.2.1', 8080]]),
          ].join('\n'),
      ),
    );
    // Upstream also counts the operations (setupOps + 1 + 2 + 6: existing elements kept). How a leftover table is taken over is TableSync's adoption logic, tested with its own
    // transaction counts in nftables-proxier.transactions.spec.ts; here only the outcome is checked.
  });
});
