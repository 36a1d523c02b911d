// kube-proxy-ts's own transaction strategy (no upstream test covers it): O(change) partial syncs,
// full syncs that rewrite nothing already right, cold starts in batches, atomic rebuilds of a table
// left by another process, failures, and a table deleted behind the proxier's back.
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { NftTransaction } from '../nft/nft-transaction.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, type FakeProxier } from '../testing/fake-proxier.js';
import { COLD_START_BATCH } from './cold-start.js';

function svc(i: number): V1Service {
  return makeTestService('ns', `svc${i}`, (s) => Object.assign(s.spec, { clusterIP: `172.30.${i >> 8}.${i & 255}`, ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }));
}

function eps(i: number, ips: string[]): V1EndpointSlice {
  return makeTestEndpointSlice('ns', `svc${i}`, 1, (e) => {
    e.endpoints = ips.map((ip) => ({ addresses: [ip] }));
    e.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
  });
}

function load(fp: FakeProxier, n: number): void {
  for (let i = 1; i <= n; i++) {
    fp.proxier.onServiceAdd(svc(i));
    fp.proxier.onEndpointSliceAdd(eps(i, [`10.1.${i >> 8}.${i & 255}`, `10.2.${i >> 8}.${i & 255}`]));
  }
}

const last = (fp: FakeProxier): NftTransaction => fp.nft.transactions[fp.nft.transactions.length - 1];

describe('nftables proxier transactions', () => {
  it('a one-endpoint change is one transaction touching only that service', async () => {
    const fp = newFakeProxier();
    load(fp, 50);
    await fp.proxier.syncProxyRules();
    const before = fp.nft.transactions.length;
    fp.proxier.onEndpointSliceUpdate(eps(7, ['10.1.0.7', '10.2.0.7']), eps(7, ['10.1.0.7', '10.3.0.7']));
    await fp.proxier.syncProxyRules();
    expect(fp.nft.transactions.length).toBe(before + 1);
    const tx = last(fp);
    expect(tx.lines.every((l) => l.includes('ns/svc7/'))).toBe(true);
    // The service chain flushed and its one DNAT-map rule rewritten (no endpoint chains without
    // affinity, upstream v1.36+); no service element changes (the cluster IP still leads to the same
    // service chain). The endpoints are not on this node, so hairpin-connections does not change.
    expect(tx.counts()).toEqual({ 'add chain': 1, 'flush chain': 1, 'add rule': 1 });
    expect(tx.lines).toContain('add rule ip kube-proxy service-VNLW666C-ns/svc7/tcp/p80 meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.1.0.7 . 80 , 1 : 10.3.0.7 . 80 }');
    expect(fp.proxier.tableState.staleChains.size).toBe(0);
  });

  it('deletes the chains that went stale once a second has passed, in a transaction of its own', async () => {
    const fp = newFakeProxier();
    load(fp, 3);
    await fp.proxier.syncProxyRules();
    fp.proxier.onServiceDelete(svc(2));
    await fp.proxier.syncProxyRules();
    const stale = [...fp.proxier.tableState.staleChains.keys()];
    // The service chain only: without affinity there are no endpoint chains.
    expect(stale).toHaveLength(1);
    fp.clock.advance(1000);
    const before = fp.nft.transactions.length;
    await fp.proxier.syncProxyRules();
    // Nothing else changed: the deletion is the only transaction of this sync.
    expect(fp.nft.transactions.length).toBe(before + 1);
    const deletion = fp.nft.transactions[before];
    expect(deletion.lines).toEqual(stale.map((c) => `delete chain ip kube-proxy ${c}`));
    expect(fp.proxier.tableState.staleChains.size).toBe(0);
    expect(fp.nft.table.chainNames().some((c) => c.includes('ns/svc2/'))).toBe(false);
  });

  it('a full sync with nothing changed writes nothing', async () => {
    const fp = newFakeProxier();
    load(fp, 20);
    await fp.proxier.syncProxyRules();
    const dump = fp.nft.table.dump();
    // A Node label change asks for a full sync (topology may have changed).
    fp.proxier.onNodeAdd({ metadata: { name: 'test-node', labels: { 'topology.kubernetes.io/zone': 'a' } } });
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.fullSyncs).toBe(2);
    expect(fp.proxier.stats.lastOperations).toBe(0);
    expect(fp.nft.table.dump()).toBe(dump);
  });

  it(`fills an empty table in batches of ${COLD_START_BATCH} services (skeleton first), every element last`, async () => {
    const fp = newFakeProxier();
    load(fp, COLD_START_BATCH + 10);
    await fp.proxier.syncProxyRules();
    expect(fp.nft.transactions).toHaveLength(3);
    const [first, second, third] = fp.nft.transactions;
    expect(first.lines[0]).toBe('add table ip kube-proxy { comment "rules for kube-proxy" ; }');
    expect(first.lines.filter((l) => l.startsWith('add chain ip kube-proxy service-') && l.includes('/'))).toHaveLength(COLD_START_BATCH);
    expect(second.lines.some((l) => l.startsWith('add table'))).toBe(false);
    expect(second.lines.filter((l) => l.startsWith('add chain ip kube-proxy service-'))).toHaveLength(10);
    // No map points at a new chain before the last transaction: only then is anything reachable.
    expect([first, second].some((tx) => tx.lines.some((l) => l.startsWith('add element')))).toBe(false);
    expect(third.lines.every((l) => l.startsWith('add element'))).toBe(true);
    expect(fp.nft.table.elementsOf('cluster-ips')!.size).toBe(COLD_START_BATCH + 10);
    expect(fp.nft.table.elementsOf('nodeport-ips')!.size).toBe(1);
  });

  it('a batch failing mid cold start: the kernel is read again and the half-built table taken over', async () => {
    const fp = newFakeProxier();
    load(fp, COLD_START_BATCH + 10);
    const run = fp.nft.run.bind(fp.nft);
    let calls = 0;
    fp.nft.run = async (tx) => {
      if (++calls === 2) throw new Error('nft: interrupted');
      return run(tx);
    };
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.transactionFailures).toBe(1);
    fp.nft.run = run;
    await fp.proxier.syncProxyRules();
    expect(fp.logger.entries.some((e) => e.message === 'Taking over the kube-proxy nftables table a previous process left')).toBe(true);
    const fresh = newFakeProxier();
    load(fresh, COLD_START_BATCH + 10);
    await fresh.proxier.syncProxyRules();
    expect(fp.nft.table.dump()).toBe(fresh.nft.table.dump());
  });

  it('takes over a table a previous process left: batches of whole services, no gap, then removes what nobody claimed', async () => {
    // The previous process: the same services, plus one since deleted (svc9999) and an old chain.
    // Its endpoints were others (they moved while no proxier ran), so every service chain differs.
    const previous = newFakeProxier();
    for (let i = 1; i <= COLD_START_BATCH + 10; i++) {
      previous.proxier.onServiceAdd(svc(i));
      previous.proxier.onEndpointSliceAdd(eps(i, [`10.3.${i >> 8}.${i & 255}`, `10.4.${i >> 8}.${i & 255}`]));
    }
    previous.proxier.onServiceAdd(svc(9999));
    previous.proxier.onEndpointSliceAdd(eps(9999, ['10.9.9.9']));
    await previous.proxier.syncProxyRules();
    previous.nft.table.run(new NftTransaction('ip').addChain('service-OLD-ns/gone/tcp/p80').lines);

    const fp = newFakeProxier();
    fp.nft.table.run([...previous.nft.table.dumpLines()]);
    load(fp, COLD_START_BATCH + 10);
    await fp.proxier.syncProxyRules();
    const txs = fp.nft.transactions;
    expect(txs).toHaveLength(3);
    // Never deleted as a whole, so services in the second batch are served by the old rules meanwhile.
    expect(txs.some((tx) => tx.lines.some((l) => l.startsWith('delete table')))).toBe(false);
    // Chains that differ are rewritten; elements already right are not rewritten.
    expect(txs[0].counts()['add element']).toBe(undefined);
    expect(txs[0].lines).toContain('flush chain ip kube-proxy service-AFD2ON2L-ns/svc1/tcp/p80');
    // The last transaction flushes what nobody rewrote and deletes the orphaned elements.
    const last = txs[2].lines;
    expect(last).toContain('flush chain ip kube-proxy service-OLD-ns/gone/tcp/p80');
    expect(last.filter((l) => l.startsWith('flush chain')).some((l) => l.includes('ns/svc9999/'))).toBe(true);
    expect(last).toContain('delete element ip kube-proxy cluster-ips { 172.30.39.15 }');
    fp.clock.advance(1000);
    await fp.proxier.syncProxyRules();
    expect(fp.nft.table.chainNames().some((c) => c.includes('OLD') || c.includes('svc9999'))).toBe(false);
    // Same table as a fresh start would build.
    const fresh = newFakeProxier();
    load(fresh, COLD_START_BATCH + 10);
    await fresh.proxier.syncProxyRules();
    expect(fp.nft.table.dump()).toBe(fresh.nft.table.dump());
  });

  it('over a table it cannot take over (a base chain with another priority), rebuilds it in one atomic transaction', async () => {
    const fp = newFakeProxier();
    fp.nft.table.run(new NftTransaction('ip').addTable().addChain({ name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -90 } }).lines);
    load(fp, COLD_START_BATCH + 10);
    await fp.proxier.syncProxyRules();
    expect(fp.nft.transactions).toHaveLength(1);
    expect(fp.nft.transactions[0].lines.slice(0, 2)).toEqual(['add table ip kube-proxy { comment "rules for kube-proxy" ; }', 'delete table ip kube-proxy']);
    expect(fp.nft.table.chainBody('nat-prerouting')).toBe(' { type nat hook prerouting priority -100 ; }');
  });

  it('a failed transaction changes nothing, is counted, and the retry (a full sync) repairs it', async () => {
    const fp = newFakeProxier();
    load(fp, 5);
    await fp.proxier.syncProxyRules();
    const dump = fp.nft.table.dump();
    fp.proxier.onServiceDelete(svc(3));
    fp.nft.failNext = 'Error: Could not process rule: Device or resource busy';
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.transactionFailures).toBe(1);
    expect(fp.nft.table.dump()).toBe(dump);
    expect(fp.logger.entries.some((e) => e.level === 'error' && e.message === 'nftables sync failed')).toBe(true);
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.fullSyncs).toBe(2);
    // svc3's chains are flushed now (deleted a second later), its addresses gone from the maps.
    const svc3 = fp.nft.table.chainNames().filter((c) => c.includes('ns/svc3/'));
    expect(svc3.map((c) => fp.nft.table.rulesOf(c))).toEqual([[]]);
    expect(fp.nft.table.elementsOf('cluster-ips')!.has('172.30.0.3')).toBe(false);
    expect([...fp.nft.table.elementsOf('service-ips')!.keys()].some((k) => k.startsWith('172.30.0.3 '))).toBe(false);
  });

  it('notices a deleted table at the next check (one syncPeriod) and rebuilds everything', async () => {
    const fp = newFakeProxier();
    const loop = fp.proxier.syncLoop();
    load(fp, 5);
    await fp.proxier.syncProxyRules();
    const dump = fp.nft.table.dump();
    fp.nft.table.deleteTable();
    // The check runs every nftables.syncPeriod (30 s by default); it asks for a full sync.
    for (let t = 0; t < 31; t++) {
      fp.clock.advance(1000);
      await new Promise((r) => setImmediate(r));
    }
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.tableRebuilds).toBe(1);
    expect(fp.nft.table.dump()).toBe(dump);
    fp.proxier.stop();
    await loop;
  });
});
