/**
 * The IPVS proxier's partial syncs against the in-memory kernel (the tools' text applied as the tools
 * would): after any sequence of changes, what the partial batches left in the kernel is exactly what
 * a fresh proxier's full rebuild + full diff leaves there; the read-back repair still restores what
 * someone else removed, on its cadence; a failed apply is followed by a full sync that converges.
 */
import type { V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';
import { advanceSettling, settle } from '@kube-proxy/core/testing';
import { node, rig, service, slice, start, type Rig } from './testing/proxier-fixtures.js';
import { seededRandom as prng } from '../testing/seeded-random.js';

const NODE_ADDRESSES = [
  [{ type: 'InternalIP', address: '192.168.50.1' }],
  [{ type: 'InternalIP', address: '192.168.50.1' }, { type: 'ExternalIP', address: '203.0.113.1' }],
  [{ type: 'InternalIP', address: '192.168.50.2' }],
];

/** One random Service `name` (ClusterIP, NodePort or LoadBalancer, shared external IPs) and its slice. */
function randomObjects(rand: () => number, name: string): { svc: V1Service; slice: V1EndpointSlice } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const type = pick(['ClusterIP', 'NodePort', 'LoadBalancer']);
  const port = { name: 'http', port: pick([80, 443]), protocol: 'TCP', targetPort: 8080, ...(type !== 'ClusterIP' ? { nodePort: 30000 + Math.floor(rand() * 4) } : {}) };
  const spec: Record<string, unknown> = { type, ports: [port] };
  if (rand() < 0.3) spec['externalIPs'] = [pick(['203.0.113.1', '203.0.113.9'])];
  if (type !== 'ClusterIP' && rand() < 0.4) spec['externalTrafficPolicy'] = 'Local';
  const svc = service(name, `10.96.0.${1 + Math.floor(rand() * 6)}`, spec);
  if (type === 'LoadBalancer') (svc as { status?: unknown }).status = { loadBalancer: { ingress: [{ ip: pick(['198.51.100.1', '198.51.100.2']) }] } };
  const ips = ['10.244.1.5', '10.244.2.6', '10.244.3.7', '10.244.4.8'].filter(() => rand() < 0.5);
  const s = slice(name, ips);
  // Some endpoints on this node (hairpin entries, Local policy).
  for (const ep of s.endpoints) if (rand() < 0.3) ep.nodeName = 'node-1';
  return { svc, slice: s };
}

/** What a fresh proxier's first (full) sync leaves in an empty kernel for the same objects and node. */
async function fullSyncOf(services: ReadonlyMap<string, V1Service>, slices: ReadonlyMap<string, V1EndpointSlice>, n: V1Node): Promise<string> {
  const fresh = rig();
  fresh.proxier.onNodeAdd(n);
  start(fresh, [...services.values()], [...slices.values()]);
  void fresh.proxier.syncLoop();
  await settle();
  await fresh.proxier.firstSync();
  const text = kernelText(fresh);
  fresh.proxier.stop();
  return text;
}

function kernelText(r: Rig): string {
  const d = r.kernel.memory.dump('IPv4');
  return [d.ipvs, d.ipset, d.kubeIpvs0, r.tables.saveAll(['filter', 'nat'])].join('\n');
}

describe('IPVS partial syncs', () => {
  it.each([11, 12, 13])('leave the kernel exactly as a full rebuild + full diff would, over random changes (seed %i)', async (seed) => {
    const rand = prng(seed);
    const r = rig();
    let current = node(NODE_ADDRESSES[0] as never);
    r.proxier.onNodeAdd(current);
    const services = new Map<string, V1Service>();
    const slices = new Map<string, V1EndpointSlice>();
    for (let i = 0; i < 8; i++) {
      const o = randomObjects(rand, `s${i}`);
      services.set(`s${i}`, o.svc);
      slices.set(`s${i}`, o.slice);
    }
    start(r, [...services.values()], [...slices.values()]);
    void r.proxier.syncLoop();
    await settle();
    await r.proxier.firstSync();
    for (let step = 0; step < 25; step++) {
      const name = `s${Math.floor(rand() * 10)}`;
      const roll = rand();
      const o = randomObjects(rand, name);
      const oldSvc = services.get(name);
      const oldSlice = slices.get(name);
      if (roll < 0.08) {
        const next = node(NODE_ADDRESSES[Math.floor(rand() * NODE_ADDRESSES.length)] as never);
        r.proxier.onNodeUpdate(current, next);
        current = next;
      } else if (roll < 0.2 && oldSvc !== undefined && oldSlice !== undefined) {
        r.proxier.onServiceDelete(oldSvc);
        r.proxier.onEndpointSliceDelete(oldSlice);
        services.delete(name);
        slices.delete(name);
      } else if (roll < 0.6 && oldSlice !== undefined) {
        r.proxier.onEndpointSliceUpdate(oldSlice, o.slice);
        slices.set(name, o.slice);
      } else {
        if (oldSvc !== undefined) r.proxier.onServiceUpdate(oldSvc, o.svc);
        else r.proxier.onServiceAdd(o.svc);
        if (oldSlice !== undefined) r.proxier.onEndpointSliceUpdate(oldSlice, o.slice);
        else r.proxier.onEndpointSliceAdd(o.slice);
        services.set(name, o.svc);
        slices.set(name, o.slice);
      }
      await advanceSettling(r.clock, 1500, 500);
      expect(kernelText(r)).toBe(await fullSyncOf(services, slices, current));
    }
    // Most of those syncs were partial (node changes and the start are repairs).
    expect(r.proxier.stats.partialSyncs).toBeGreaterThan(10);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    r.proxier.stop();
  });

  it('a change is a partial sync: no kernel read-back, only its own lines written', async () => {
    const r = rig();
    start(r, [service('web', '10.96.0.10'), service('api', '10.96.0.11')], [slice('web', ['10.244.1.5']), slice('api', ['10.244.1.6'])]);
    void r.proxier.syncLoop();
    await settle();
    await r.proxier.firstSync();
    const repairs = r.proxier.stats.repairSyncs;
    const writes = r.kernel.writes.length;
    r.proxier.onEndpointSliceUpdate(slice('web', ['10.244.1.5']), slice('web', ['10.244.2.6']));
    await advanceSettling(r.clock, 1500, 500);
    // (the rig is a dry run, whose printout reads the in-memory kernel; the sync itself did not)
    expect(r.proxier.stats.repairSyncs).toBe(repairs);
    expect(r.proxier.stats.partialSyncs).toBe(1);
    expect(r.kernel.writes.slice(writes)).toEqual([{ tool: 'ipvsadm', text: '-d -t 10.96.0.10:80 -r 10.244.1.5:8080\n-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 1\n' }]);
    r.proxier.stop();
  });

  it('what someone else deleted survives partial syncs and is restored by the next repair sync (every --ipvs-sync-period)', async () => {
    const r = rig();
    start(r, [service('web', '10.96.0.10'), service('api', '10.96.0.11')], [slice('web', ['10.244.1.5']), slice('api', ['10.244.1.6'])]);
    void r.proxier.syncLoop();
    await settle();
    await r.proxier.firstSync();
    const expected = kernelText(r);
    await r.kernel.memory.applyIpvsadm('-D -t 10.96.0.11:80\n');
    await r.kernel.memory.applyIpset('del KUBE-CLUSTER-IP 10.96.0.11,tcp:80\n');
    // A stream of changes to another service, every 5 s: partial syncs, which do not look at api's entries ...
    let web = slice('web', ['10.244.1.5']);
    for (let i = 0; i < 4; i++) {
      const next = slice('web', [i % 2 === 0 ? '10.244.2.6' : '10.244.1.5']);
      r.proxier.onEndpointSliceUpdate(web, next);
      web = next;
      await advanceSettling(r.clock, 5000, 500);
    }
    expect(r.kernel.memory.dump('IPv4').ipvs).not.toContain('10.96.0.11:80');
    // ... until the repair sync, at most one sync period (30 s) after the last one, even while changes keep coming.
    const repairs = r.proxier.stats.repairSyncs;
    for (let i = 0; i < 4; i++) {
      const next = slice('web', [i % 2 === 0 ? '10.244.2.6' : '10.244.1.5']);
      r.proxier.onEndpointSliceUpdate(web, next);
      web = next;
      await advanceSettling(r.clock, 5000, 500);
    }
    expect(r.proxier.stats.repairSyncs).toBe(repairs + 1);
    expect(kernelText(r)).toBe(expected);
    r.proxier.stop();
  });

  it('a failed partial apply drops the cached view: the retry is a full sync that converges', async () => {
    const r = rig();
    start(r, [service('web', '10.96.0.10')], [slice('web', ['10.244.1.5'])]);
    void r.proxier.syncLoop();
    await settle();
    await r.proxier.firstSync();
    r.kernel.failIpvsadm = 1;
    // The ipset half of this change goes in, the ipvsadm half is refused.
    r.proxier.onServiceAdd(service('api', '10.96.0.11'));
    r.proxier.onEndpointSliceAdd(slice('api', ['10.244.1.6']));
    await advanceSettling(r.clock, 1500, 500);
    expect(r.proxier.stats.failedSyncs).toBe(1);
    const repairs = r.proxier.stats.repairSyncs;
    await advanceSettling(r.clock, 31_000, 1000);
    expect(r.proxier.stats.repairSyncs).toBeGreaterThan(repairs);
    expect(r.proxier.stats.failedSyncs).toBe(1);
    const services = new Map([['web', service('web', '10.96.0.10')], ['api', service('api', '10.96.0.11')]]);
    const slices = new Map([['web', slice('web', ['10.244.1.5'])], ['api', slice('api', ['10.244.1.6'])]]);
    expect(kernelText(r)).toBe(await fullSyncOf(services, slices, node([{ type: 'InternalIP', address: '192.168.50.1' }])));
    r.proxier.stop();
  });

  it('graceful termination carries over partial syncs: a draining real server is re-checked by each one', async () => {
    const r = rig();
    start(r, [service('web', '10.96.0.10'), service('api', '10.96.0.11')], [slice('web', ['10.244.1.5', '10.244.2.6']), slice('api', ['10.244.1.6'])]);
    void r.proxier.syncLoop();
    await settle();
    await r.proxier.firstSync();
    r.kernel.setConnections('10.96.0.10:80/TCP', '10.244.1.5:8080', 1);
    r.proxier.onEndpointSliceUpdate(slice('web', ['10.244.1.5', '10.244.2.6']), slice('web', ['10.244.2.6']));
    await advanceSettling(r.clock, 1500, 500);
    expect(r.kernel.memory.dump('IPv4').ipvs).toContain('-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 0');
    expect(r.proxier.stats.terminatingRealServers).toBe(1);
    // Drained; the next sync is a partial one for another service, and still deletes it.
    r.kernel.setConnections('10.96.0.10:80/TCP', '10.244.1.5:8080', 0);
    r.proxier.onEndpointSliceUpdate(slice('api', ['10.244.1.6']), slice('api', ['10.244.1.7']));
    await advanceSettling(r.clock, 1500, 500);
    expect(r.proxier.stats.repairSyncs).toBe(1);
    expect(r.kernel.memory.dump('IPv4').ipvs).not.toContain('10.244.1.5');
    expect(r.proxier.stats).toMatchObject({ terminatingRealServers: 0, virtualServers: 2, realServers: 2 });
    r.proxier.stop();
  });
});
