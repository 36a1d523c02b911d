// A restart over a table that an older kube-proxy (the v1.33–v1.35 layout: mark-for-masquerade, an
// endpoint chain per endpoint, `numgen … vmap`) left in the kernel must end in exactly the table a
// fresh start writes, with every existing service served at every step in between (issue 23: "a
// restart over a table in the old layout converges to the new one without a gap").
//
// fixtures/restart-scenario.v1.35-layout.nft is that older table: the scenario's services synced by
// this repository's proxier before the v1.36 layout (main at bab8d9d, its fake proxier's dump after
// the stale-chain cleanup).
import { readFileSync } from 'node:fs';
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { MemoryNftTable } from '../nft/memory-table.js';
import { newFakeProxier, normalizedLines, TEST_NODE_IPS } from '../testing/fake-proxier.js';
import { runPacketFlows, type PacketFlowCase } from '../testing/packet-flow.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const scenario = JSON.parse(fixture('restart-scenario.json')) as { services: V1Service[]; slices: V1EndpointSlice[] };
const OLD_TABLE = fixture('restart-scenario.v1.35-layout.nft');
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

/** The flows whose outcome must not change at any step (masquerading included). */
const FLOWS: PacketFlowCase[] = [
  { name: 'pod to a 3-endpoint ClusterIP', sourceIP: '10.0.9.9', destIP: '172.30.0.41', destPort: 80, output: '' },
  { name: 'hairpin through the 3-endpoint service', sourceIP: '10.0.1.1', destIP: '172.30.0.41', destPort: 80, output: '' },
  { name: 'pod to a single-endpoint ClusterIP', sourceIP: '10.0.9.9', destIP: '172.30.0.42', destPort: 8080, output: '' },
  { name: 'hairpin through the single-endpoint service', sourceIP: '10.0.2.1', destIP: '172.30.0.42', destPort: 8080, output: '' },
  { name: 'pod to a ClientIP-affinity ClusterIP', sourceIP: '10.0.9.9', destIP: '172.30.0.43', destPort: 80, output: '' },
  { name: 'off-cluster source to a ClusterIP (masqueraded)', sourceIP: '203.0.113.2', destIP: '172.30.0.41', destPort: 80, output: '' },
  { name: 'external client to an eTP=Local NodePort', sourceIP: '203.0.113.2', destIP: '192.168.0.2', destPort: 30004, output: '' },
  { name: 'node to an eTP=Local NodePort', sourceIP: '192.168.0.2', destIP: '192.168.0.2', destPort: 30004, output: '' },
  { name: 'pod to a service without endpoints', sourceIP: '10.0.9.9', destIP: '172.30.0.45', destPort: 80, output: '' },
  { name: 'allowed source to a LoadBalancer IP (UDP)', sourceIP: '203.0.113.2', protocol: 'udp', destIP: '1.2.3.4', destPort: 80, output: '' },
  { name: 'denied source to a LoadBalancer IP (UDP)', sourceIP: '203.0.113.130', protocol: 'udp', destIP: '1.2.3.4', destPort: 80, output: '' },
  { name: 'external client to an externalIP (UDP)', sourceIP: '203.0.113.2', protocol: 'udp', destIP: '192.168.99.11', destPort: 80, output: '' },
];

const outcomes = (table: MemoryNftTable) => runPacketFlows(table, TEST_NODE_IPS, FLOWS).got;

function fed() {
  const fake = newFakeProxier();
  for (const s of scenario.services) fake.proxier.onServiceAdd(s);
  for (const e of scenario.slices) fake.proxier.onEndpointSliceAdd(e);
  return fake;
}

describe('nftables restart over a table in the v1.35 layout', () => {
  it('converges to the table a fresh start writes, and serves every flow alike at every step', async () => {
    const fresh = fed();
    await fresh.proxier.syncProxyRules();
    fresh.clock.advance(2000);
    await fresh.proxier.syncProxyRules();
    const want = normalizedLines(fresh.nft.table.dump());
    const wantFlows = outcomes(fresh.nft.table);

    const restarted = fed();
    restarted.nft.table.run(lines(OLD_TABLE));
    expect(restarted.nft.table.chainNames()).toContain('mark-for-masquerade');
    const oldFlows = outcomes(restarted.nft.table);
    // The two layouts are equivalent for every flow: what the old table did is what the new one does.
    expect(oldFlows).toEqual(wantFlows);
    expect(wantFlows.find((f) => f.name === 'hairpin through the single-endpoint service')).toMatchObject({ output: '10.0.2.1:8080', masq: true });
    expect(wantFlows.find((f) => f.name === 'denied source to a LoadBalancer IP (UDP)')).toMatchObject({ output: 'DROP' });

    await restarted.proxier.syncProxyRules();
    const firstSync = [...restarted.nft.transactions];
    expect(restarted.logger.entries.some((e) => e.message.startsWith('Taking over the kube-proxy nftables table'))).toBe(true);
    // The takeover is one transaction (this scenario is under one batch) and a second one removing
    // what no service claims; the chains left over go a second later.
    expect(firstSync.length).toBe(2);
    restarted.clock.advance(2000);
    await restarted.proxier.syncProxyRules();
    const all = restarted.nft.transactions;
    expect(all.length).toBe(3);
    expect(normalizedLines(restarted.nft.table.dump())).toEqual(want);

    // Replayed one transaction at a time over the old table: no step changes where any flow goes.
    const replay = new MemoryNftTable('ip');
    replay.run(lines(OLD_TABLE));
    for (const [i, tx] of all.entries()) {
      replay.run(tx.lines);
      expect({ step: i, flows: outcomes(replay) }).toEqual({ step: i, flows: wantFlows });
    }
    expect(replay.chainNames().filter((c) => c === 'mark-for-masquerade' || c.startsWith('endpoint-') && !c.includes('/sticky/'))).toEqual([]);
  });

  it('never takes a whole table rebuild path for the old layout (that would not be incremental)', async () => {
    const restarted = fed();
    restarted.nft.table.run(lines(OLD_TABLE));
    await restarted.proxier.syncProxyRules();
    const first = restarted.nft.transactions[0]!;
    expect(first.lines.some((l) => /^delete table /.test(l))).toBe(false);
    expect(restarted.logger.entries.some((e) => e.message.startsWith('Rebuilding'))).toBe(false);
  });
});
