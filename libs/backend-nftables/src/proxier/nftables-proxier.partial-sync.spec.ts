// Ported from upstream's TestSyncProxyRulesRepeated and TestSyncProxyRulesStartup
// (pkg/proxy/nftables/proxier_test.go): the table after each of a series of changes, and what each
// sync's transaction wrote. The dumps are upstream's. The transactions are ours, and often smaller:
// upstream rewrites every chain of a changed service ("add+flush" each, then all its rules), while
// TableSync skips chains whose rules did not change and never flushes a chain it has just created.
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { BASE_RULES } from '../testing/base-rules.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, normalizedLines } from '../testing/fake-proxier.js';

const P = 'ip kube-proxy';
const S1 = 'service-ULMVA6XW-ns1/svc1/tcp/p80';
const E1 = 'endpoint-5TPGNJF2-ns1/svc1/tcp/p80__10.0.1.1/80';
const S2 = 'service-MHHHYRWA-ns2/svc2/tcp/p8080';
const E2 = 'endpoint-7RVP4LUQ-ns2/svc2/tcp/p8080__10.0.2.1/8080';
const S3 = 'service-4AT6LBPK-ns3/svc3/tcp/p80';
const E31 = 'endpoint-2OCDJSZQ-ns3/svc3/tcp/p80__10.0.3.1/80';
const E32 = 'endpoint-SWWHDC7X-ns3/svc3/tcp/p80__10.0.3.2/80';
const E33 = 'endpoint-TQ2QKHCZ-ns3/svc3/tcp/p80__10.0.3.3/80';
const S4 = 'service-LAUZTJTB-ns4/svc4/tcp/p80';
const E4 = 'endpoint-WAHRBT2B-ns4/svc4/tcp/p80__10.0.4.1/80';

const clusterIP = (n: number, name: string, port: number) =>
  makeTestService(`ns${n}`, name, (s) => Object.assign(s.spec, { type: 'ClusterIP', clusterIP: `172.30.0.4${n}`, ports: [{ name: `p${port}`, port, protocol: 'TCP' }] }));
const slice = (n: number, port: number, ips: string[]) =>
  makeTestEndpointSlice(`ns${n}`, `svc${n}`, 1, (eps) => {
    eps.addressType = 'IPv4';
    eps.endpoints = ips.map((ip) => ({ addresses: [ip] }));
    eps.ports = [{ name: `p${port}`, port, protocol: 'TCP' }];
  });

/** A service chain's rules and its endpoint chains, as upstream's expected dumps write them. */
function serviceLines(svcChain: string, vip: string, endpoints: Array<[chain: string, ip: string, port: number]>): string[] {
  const vmap = endpoints.map(([c], i) => `${i} : goto ${c}`).join(' , ');
  const lines = [
    `add chain ${P} ${svcChain}`,
    `add rule ${P} ${svcChain} ip daddr ${vip} ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
    `add rule ${P} ${svcChain} numgen random mod ${endpoints.length} vmap { ${vmap} }`,
  ];
  for (const [c, ip, port] of endpoints) {
    lines.push(`add chain ${P} ${c}`, `add rule ${P} ${c} ip saddr ${ip} jump mark-for-masquerade`, `add rule ${P} ${c} meta l4proto tcp dnat to ${ip}:${port}`);
  }
  return lines;
}
const clusterIPElement = (ip: string) => `add element ${P} cluster-ips { ${ip} }`;
const serviceIPElement = (ip: string, port: number, chain: string) => `add element ${P} service-ips { ${ip} . tcp . ${port} : goto ${chain} }`;

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
    const svc1Lines = [clusterIPElement('172.30.0.41'), serviceIPElement('172.30.0.41', 80, S1), ...serviceLines(S1, '172.30.0.41', [[E1, '10.0.1.1', 80]])];
    const svc2Lines = [clusterIPElement('172.30.0.42'), serviceIPElement('172.30.0.42', 8080, S2), ...serviceLines(S2, '172.30.0.42', [[E2, '10.0.2.1', 8080]])];
    expectTable([...svc1Lines, ...svc2Lines]);

    // Add a new service and its endpoints.
    proxier.onServiceAdd(clusterIP(3, 'svc3', 80));
    let eps3: V1EndpointSlice = slice(3, 80, ['10.0.3.1']);
    proxier.onEndpointSliceAdd(eps3);
    await sync();
    const svc3Elements = [clusterIPElement('172.30.0.43'), serviceIPElement('172.30.0.43', 80, S3)];
    expectTable([...svc1Lines, ...svc2Lines, ...svc3Elements, ...serviceLines(S3, '172.30.0.43', [[E31, '10.0.3.1', 80]])]);
    // Upstream: 10 operations (2 elements, add+flush of 2 chains, 4 rules). New chains need no flush: 8.
    expect(last().lines.slice().sort()).toEqual([...svc3Elements, ...serviceLines(S3, '172.30.0.43', [[E31, '10.0.3.1', 80]])].sort());
    expect(last().size).toBe(8);

    // Delete a service: its chains are flushed, not yet deleted. Upstream: 4 operations, as ours.
    proxier.onServiceDelete(svc2);
    await sync();
    const svc3Full = () => [...svc3Elements, ...serviceLines(S3, '172.30.0.43', [[E31, '10.0.3.1', 80]])];
    expectTable([...svc1Lines, `add chain ${P} ${S2}`, `add chain ${P} ${E2}`, ...svc3Full()]);
    expect(last().counts()).toEqual({ 'delete element': 2, 'flush chain': 2 });
    expect([...proxier.tableState.staleChains.keys()].sort()).toEqual([E2, S2].sort());

    // A second later the stale chains go, in a transaction of their own; the sync's own writes nothing.
    ageStaleChains();
    let txs = await sync();
    expectTable([...svc1Lines, ...svc3Full()]);
    // Upstream: the sync's own transaction has 0 operations. An empty transaction starts no nft here.
    expect(txs.map((t) => t.counts())).toEqual([{ 'delete chain': 2 }]);
    expect(proxier.stats.lastOperations).toBe(0);

    // Add a service, sync, then add its endpoints. Upstream: 2 operations, as ours.
    proxier.onServiceAdd(clusterIP(4, 'svc4', 80));
    await sync();
    const svc4NoEndpoints = [clusterIPElement('172.30.0.44'), `add element ${P} no-endpoint-services { 172.30.0.44 . tcp . 80 comment "ns4/svc4:p80" : goto reject-chain }`];
    expectTable([...svc1Lines, ...svc3Full(), ...svc4NoEndpoints]);
    expect(last().lines.slice().sort()).toEqual(svc4NoEndpoints.slice().sort());

    proxier.onEndpointSliceAdd(slice(4, 80, ['10.0.4.1']));
    await sync();
    const svc4Lines = [clusterIPElement('172.30.0.44'), serviceIPElement('172.30.0.44', 80, S4), ...serviceLines(S4, '172.30.0.44', [[E4, '10.0.4.1', 80]])];
    expectTable([...svc1Lines, ...svc3Full(), ...svc4Lines]);
    // Upstream: 10 (2 element changes, add+flush 2 chains, 4 rules). Ours: 2 + 2 chains + 4 rules.
    expect(last().counts()).toEqual({ 'delete element': 1, 'add element': 1, 'add chain': 2, 'add rule': 4 });

    // Change an endpoint of an existing service: the old endpoint chain stays (flushed) for now.
    const eps3b = slice(3, 80, ['10.0.3.2']);
    proxier.onEndpointSliceUpdate(eps3, eps3b);
    eps3 = eps3b;
    await sync();
    const svc3b = serviceLines(S3, '172.30.0.43', [[E32, '10.0.3.2', 80]]);
    expectTable([...svc1Lines, ...svc3Elements, ...svc3b, `add chain ${P} ${E31}`, ...svc4Lines]);
    // Upstream: 9 (add+flush 2 chains, 4 rules, flush the old chain). The new endpoint chain needs no flush: 8.
    expect(last().counts()).toEqual({ 'add chain': 2, 'flush chain': 2, 'add rule': 4 });
    expect(last().lines).toContain(`flush chain ${P} ${E31}`);

    // Add an endpoint (after the old chain aged): the unchanged 10.0.3.2 chain is not rewritten.
    ageStaleChains();
    const eps3c = slice(3, 80, ['10.0.3.2', '10.0.3.3']);
    proxier.onEndpointSliceUpdate(eps3b, eps3c);
    txs = await sync();
    const svc3c = serviceLines(S3, '172.30.0.43', [[E32, '10.0.3.2', 80], [E33, '10.0.3.3', 80]]);
    expectTable([...svc1Lines, ...svc3Elements, ...svc3c, ...svc4Lines]);
    expect(txs[0].lines).toEqual([`delete chain ${P} ${E31}`]);
    // Upstream: 12 (add+flush 3 chains, 6 rules). Ours: the service chain (add, flush, 2 rules) and the new endpoint chain (add, 2 rules).
    expect(last().counts()).toEqual({ 'add chain': 2, 'flush chain': 1, 'add rule': 4 });
    expect(last().lines.filter((l) => l.includes(E32))).toEqual([`add rule ${P} ${S3} numgen random mod 2 vmap { 0 : goto ${E32} , 1 : goto ${E33} }`]);

    // Empty the service's endpoints: its chains are flushed, not deleted. Upstream: 5, as ours.
    const eps3d = slice(3, 80, []);
    proxier.onEndpointSliceUpdate(eps3c, eps3d);
    await sync();
    const svc3NoEndpoints = [clusterIPElement('172.30.0.43'), `add element ${P} no-endpoint-services { 172.30.0.43 . tcp . 80 comment "ns3/svc3:p80" : goto reject-chain }`];
    expectTable([...svc1Lines, ...svc3NoEndpoints, `add chain ${P} ${S3}`, `add chain ${P} ${E32}`, `add chain ${P} ${E33}`, ...svc4Lines]);
    expect(last().counts()).toEqual({ 'delete element': 1, 'add element': 1, 'flush chain': 3 });
    expect([...proxier.tableState.staleChains.keys()].sort()).toEqual([S3, E32, E33].sort());

    // Restore them at once: the chains are refilled and are stale no more.
    proxier.onEndpointSliceUpdate(eps3d, eps3c);
    await sync();
    const restored = [...svc1Lines, ...svc3Elements, ...svc3c, ...svc4Lines];
    expectTable(restored);
    // Upstream: 14 (2 elements, add+flush 3 chains, 6 rules). The flushed chains are empty: no second flush, 11.
    expect(last().counts()).toEqual({ 'delete element': 1, 'add element': 1, 'add chain': 3, 'add rule': 6 });
    expect(proxier.tableState.staleChains.size).toBe(0);

    // Empty them and restore them after the chains aged: deleted first, then recreated.
    proxier.onEndpointSliceUpdate(eps3c, eps3d);
    await sync();
    ageStaleChains();
    proxier.onEndpointSliceUpdate(eps3d, eps3c);
    txs = await sync();
    expectTable(restored);
    expect(txs[0].counts()).toEqual({ 'delete chain': 3 });

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
      `add chain ${P} ${S1}`,
      `add chain ${P} ${E1}`,
      `add chain ${P} ${S2}`,
      `add chain ${P} ${E2}`,
      ...serviceLines(S1, '172.30.0.41', [[E1, '10.0.1.1', 80]]).filter((l) => l.startsWith('add rule')),
      ...serviceLines(S2, '172.30.0.42', [[E2, '10.0.2.1', 8080]]).filter((l) => l.startsWith('add rule')),
      clusterIPElement('172.30.0.41'),
      clusterIPElement('172.30.0.42'),
      serviceIPElement('172.30.0.41', 80, S1),
      serviceIPElement('172.30.0.42', 8080, S2),
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
            ...serviceLines(S1, '172.30.0.41', [[E1, '10.0.1.1', 80], ['endpoint-ZCZBVNAZ-ns1/svc1/tcp/p80__10.0.1.2/80', '10.0.1.2', 80]]),
            ...serviceLines(S2, '172.30.0.42', [[E2, '10.0.2.1', 8080]]),
          ].join('\n'),
      ),
    );
    // Upstream also counts the operations (setupOps + 14: existing elements and endpoint chains
    // kept). How a leftover table is taken over is TableSync's adoption logic, tested with its own
    // transaction counts in nftables-proxier.transactions.spec.ts; here only the outcome is checked.
  });
});
