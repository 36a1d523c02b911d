// A restart over the table this version of the proxier left (issue 24: "a restart over its own table
// no slower than a cold start; do not rewrite what is already right"): the new process reads each
// chain's rules and keeps every chain that already holds what it would write. So a restart over an
// identical table writes no rule, one over a table where one service changed while the proxier was
// down writes that service's objects only, and a chain someone changed in the kernel is rewritten.
// Every intermediate kernel state serves the existing services as before.
import { readFileSync } from 'node:fs';
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { MemoryNftTable } from '../nft/memory-table.js';
import { newFakeProxier, normalizedLines, TEST_NODE_IPS, type FakeProxier } from '../testing/fake-proxier.js';
import { runPacketFlows, type PacketFlowCase } from '../testing/packet-flow.js';

const scenario = JSON.parse(readFileSync(new URL('./fixtures/restart-scenario.json', import.meta.url), 'utf8')) as { services: V1Service[]; slices: V1EndpointSlice[] };
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

const FLOWS: PacketFlowCase[] = [
  { name: 'pod to a 3-endpoint ClusterIP', sourceIP: '10.0.9.9', destIP: '172.30.0.41', destPort: 80, output: '' },
  { name: 'pod to a single-endpoint ClusterIP', sourceIP: '10.0.9.9', destIP: '172.30.0.42', destPort: 8080, output: '' },
  { name: 'hairpin through the single-endpoint service', sourceIP: '10.0.2.1', destIP: '172.30.0.42', destPort: 8080, output: '' },
  { name: 'pod to a ClientIP-affinity ClusterIP', sourceIP: '10.0.9.9', destIP: '172.30.0.43', destPort: 80, output: '' },
  { name: 'off-cluster source to a ClusterIP (masqueraded)', sourceIP: '203.0.113.2', destIP: '172.30.0.41', destPort: 80, output: '' },
  { name: 'external client to an eTP=Local NodePort', sourceIP: '203.0.113.2', destIP: '192.168.0.2', destPort: 30004, output: '' },
  { name: 'pod to a service without endpoints', sourceIP: '10.0.9.9', destIP: '172.30.0.45', destPort: 80, output: '' },
  { name: 'allowed source to a LoadBalancer IP (UDP)', sourceIP: '203.0.113.2', protocol: 'udp', destIP: '1.2.3.4', destPort: 80, output: '' },
  { name: 'denied source to a LoadBalancer IP (UDP)', sourceIP: '203.0.113.130', protocol: 'udp', destIP: '1.2.3.4', destPort: 80, output: '' },
];
const outcomes = (table: MemoryNftTable) => runPacketFlows(table, TEST_NODE_IPS, FLOWS).got;

/** The scenario with the single-endpoint service's endpoint moved from 10.0.2.1 to 10.0.2.9. */
function movedSlices(): V1EndpointSlice[] {
  return scenario.slices.map((s) =>
    s.metadata?.name === 'single-1' ? { ...s, endpoints: s.endpoints.map((e) => ({ ...e, addresses: ['10.0.2.9'] })) } : s,
  );
}

function fed(slices: readonly V1EndpointSlice[] = scenario.slices): FakeProxier {
  const fake = newFakeProxier();
  for (const s of scenario.services) fake.proxier.onServiceAdd(s);
  for (const e of slices) fake.proxier.onEndpointSliceAdd(e);
  return fake;
}

/** A proxier's table after its first sync and the stale-chain cleanup a second later. */
async function settled(fake: FakeProxier): Promise<string> {
  await fake.proxier.syncProxyRules();
  fake.clock.advance(2000);
  await fake.proxier.syncProxyRules();
  return fake.nft.table.dump();
}

/** What a restart writes over `left`: its transactions' lines, and the table it ends with. */
async function restartOver(left: string, slices?: readonly V1EndpointSlice[], tamper?: (t: MemoryNftTable) => void) {
  const restarted = fed(slices);
  restarted.nft.table.run(lines(left));
  tamper?.(restarted.nft.table);
  const before = restarted.nft.table.dump();
  const dump = await settled(restarted);
  expect(restarted.logger.entries.some((e) => e.message.startsWith('Taking over the kube-proxy nftables table'))).toBe(true);
  const txs = restarted.nft.transactions;
  return { before, dump, txs, written: txs.flatMap((t) => t.lines) };
}

/** Lines that change a chain or an element (declarations of the table, sets and maps are idempotent). */
const changes = (written: readonly string[]) => written.filter((l) => !/^add (table|set|map) /.test(l));

describe('nftables restart over its own table', () => {
  it('writes no rule, chain or element over an identical table', async () => {
    const left = await settled(fed());
    const { dump, written } = await restartOver(left);
    expect(changes(written)).toEqual([]);
    // The declarations it repeats are the skeleton's: the table, its shared sets and maps.
    expect(written.length).toBeLessThanOrEqual(12);
    expect(normalizedLines(dump)).toEqual(normalizedLines(left));
  });

  it('writes only the objects of the one service that changed while it was down, serving every flow at every step', async () => {
    const left = await settled(fed());
    const want = await settled(fed(movedSlices()));
    const { before, dump, txs, written } = await restartOver(left, movedSlices());
    expect(normalizedLines(dump)).toEqual(normalizedLines(want));
    const touched = changes(written);
    expect(touched.length).toBeGreaterThan(0);
    for (const line of touched) expect(line).toMatch(/ns2\/single|10\.0\.2\.[19]/);
    // The unchanged services' flows are the same at every step; the moved one goes to the old or the new endpoint.
    const steady = (t: MemoryNftTable) => outcomes(t).filter((f) => !f.name.includes('single-endpoint'));
    const replay = new MemoryNftTable('ip');
    replay.run(lines(before));
    const expected = steady(replay);
    for (const [i, tx] of txs.entries()) {
      replay.run(tx.lines);
      expect({ step: i, flows: steady(replay) }).toEqual({ step: i, flows: expected });
      const single = outcomes(replay).find((f) => f.name === 'pod to a single-endpoint ClusterIP');
      expect(['10.0.2.1:8080', '10.0.2.9:8080']).toContain(single?.output);
    }
  });

  it('rewrites a chain someone changed in the kernel, and only that one', async () => {
    const left = await settled(fed());
    const chain = new MemoryNftTable('ip');
    chain.run(lines(left));
    const target = chain.chainNames().find((c) => c.startsWith('service-') && c.includes('ns1/multi'))!;
    const { dump, written } = await restartOver(left, undefined, (t) => t.run([`flush chain ip kube-proxy ${target}`, `add rule ip kube-proxy ${target} drop`]));
    expect(normalizedLines(dump)).toEqual(normalizedLines(left));
    const touched = changes(written);
    expect(touched).toContain(`flush chain ip kube-proxy ${target}`);
    for (const line of touched) expect(line).toContain(target);
  });

  it('rewrites a skeleton chain someone changed, and removes a chain nobody wants', async () => {
    const left = await settled(fed());
    const { dump, written } = await restartOver(left, undefined, (t) =>
      t.run(['add rule ip kube-proxy services drop', 'add chain ip kube-proxy service-XXXXXXXX-gone/svc/tcp/p', 'add rule ip kube-proxy service-XXXXXXXX-gone/svc/tcp/p drop']),
    );
    expect(normalizedLines(dump)).toEqual(normalizedLines(left));
    expect(written).toContain('flush chain ip kube-proxy services');
    expect(written).toContain('flush chain ip kube-proxy service-XXXXXXXX-gone/svc/tcp/p');
    expect(written).toContain('delete chain ip kube-proxy service-XXXXXXXX-gone/svc/tcp/p');
  });
});
