import { diffDesiredStates } from '../batch/diff-batches.js';
import { defaultOptions, makeService, NODE_IPV4, NODE_NAME, TestCluster, type TestEndpoint, type TestService } from '../testing/ipvs-fixtures.js';
import { buildDesiredIpvsState } from './build-desired-state.js';
import { ipsetCatalogue } from './ipset-catalogue.js';
import { IpvsStateIndex } from './ipvs-state-index.js';
import type { DesiredIpvsState } from './ipvs-state.js';
import { seededRandom as prng } from '../testing/seeded-random.js';

// Small pools, so that service ports collide: shared external / LB IPs (two claimants of one virtual
// server), the node's own address as an external IP, refused addresses, the same endpoint in two services.
const EXTERNAL = ['203.0.113.1', '203.0.113.2', NODE_IPV4, '0.0.0.0'];
const ENDPOINT_IPS = ['10.180.0.1', '10.180.0.2', '10.180.0.3', '224.0.0.9', '10.180.0.4'];

function randomService(rand: () => number, name: string): TestService {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  return makeService('ns', name, (svc) => {
    const type = pick(['ClusterIP', 'NodePort', 'LoadBalancer']);
    svc.spec.type = type;
    svc.spec.clusterIP = `10.96.${Math.floor(rand() * 3)}.${1 + Math.floor(rand() * 4)}`;
    const protocol = pick(['TCP', 'UDP', 'SCTP']);
    svc.spec.ports = [{ name: 'a', port: pick([80, 443]), protocol, ...(type !== 'ClusterIP' ? { nodePort: 30000 + Math.floor(rand() * 5) } : {}) }];
    if (rand() < 0.5) svc.spec.ports.push({ name: 'b', port: 8080, protocol: 'TCP', ...(type !== 'ClusterIP' ? { nodePort: 31000 + Math.floor(rand() * 5) } : {}) });
    if (rand() < 0.4) svc.spec.externalIPs = [pick(EXTERNAL)];
    if (type !== 'ClusterIP' && rand() < 0.5) svc.spec.externalTrafficPolicy = 'Local';
    if (type === 'LoadBalancer') {
      svc.status.loadBalancer = { ingress: [{ ip: pick(['198.51.100.1', '198.51.100.2']) }] };
      if (rand() < 0.5) svc.spec.loadBalancerSourceRanges = [pick(['100.101.102.0/24', '192.0.2.0/24', '100.101.102.103/32'])];
      if (svc.spec.externalTrafficPolicy === 'Local') svc.spec.healthCheckNodePort = 32000 + Math.floor(rand() * 3);
    }
    if (rand() < 0.2) svc.spec.sessionAffinity = 'ClientIP';
  });
}

function randomEndpoints(rand: () => number): TestEndpoint[] {
  const n = Math.floor(rand() * 4);
  const out: TestEndpoint[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ ip: ENDPOINT_IPS[Math.floor(rand() * ENDPOINT_IPS.length)] as string, port: 8080, nodeName: rand() < 0.5 ? NODE_NAME : 'other', ready: rand() < 0.85 });
  }
  return out.filter((e, i) => out.findIndex((o) => o.ip === e.ip) === i);
}

/** Replaces Service `name` (or removes it) in the cluster; returns the service-port keys it had or has. */
function mutate(c: TestCluster, rand: () => number, name: string): Set<string> {
  const touched = new Set<string>();
  for (const key of [...c.serviceMap.keys()]) {
    if (key.startsWith(`ns/${name}:`)) {
      touched.add(key);
      c.serviceMap.delete(key);
    }
  }
  const roll = rand();
  if (roll < 0.2) return touched; // deleted
  for (const p of c.service(randomService(rand, name))) touched.add(p.name.key);
  for (const key of touched) if (c.serviceMap.has(key)) c.endpoints(key, randomEndpoints(rand));
  return touched;
}

/** Only the endpoints of one port move (the common change). */
function moveEndpoints(c: TestCluster, rand: () => number): Set<string> {
  const keys = [...c.serviceMap.keys()];
  const key = keys[Math.floor(rand() * keys.length)];
  if (key === undefined) return new Set();
  c.endpoints(key, randomEndpoints(rand));
  return new Set([key]);
}

const options = defaultOptions('IPv4');

describe('IpvsStateIndex', () => {
  it.each([1, 2, 3, 4, 5, 6])('after random changes (seed %i) equals the full build, and its change gives the full diff', (seed) => {
    const rand = prng(seed);
    const c = new TestCluster();
    for (let i = 0; i < 12; i++) mutate(c, rand, `s${i}`);
    const index = IpvsStateIndex.build(c.serviceMap, c.endpointsMap, options);
    let before: DesiredIpvsState = buildDesiredIpvsState(c.serviceMap, c.endpointsMap, options);
    const seen = { skipped: 0, noLocal: 0, removedServers: 0, setFlips: 0 };
    expect(index.materialize()).toEqual(before);
    for (let step = 0; step < 60; step++) {
      const touched = rand() < 0.5 ? moveEndpoints(c, rand) : mutate(c, rand, `s${Math.floor(rand() * 14)}`);
      for (const key of touched) index.update(key, c.serviceMap, c.endpointsMap);
      const change = index.takeChange();
      const after = buildDesiredIpvsState(c.serviceMap, c.endpointsMap, options);
      expect(index.materialize()).toEqual(after);
      // The touched entries alone carry exactly the full ipset diff.
      const sets = (lists: ReadonlyMap<string, readonly string[]>): DesiredIpvsState => ({ ...after, ipsets: ipsetCatalogue('IPv4').map((set) => ({ set, entries: lists.get(set.role) ?? [] })) });
      expect(diffDesiredStates(sets(change.ipsetsBefore), sets(change.ipsetsAfter)).ipset).toBe(diffDesiredStates(before, after).ipset);
      // Every virtual server that changed is among the touched ones.
      const changedServers = new Set([...before.virtualServers, ...after.virtualServers].map((v) => v.key).filter((k) => JSON.stringify(before.virtualServers.find((v) => v.key === k)) !== JSON.stringify(after.virtualServers.find((v) => v.key === k))));
      for (const k of changedServers) expect(change.servers).toContain(k);
      seen.skipped += after.skippedAddresses?.length ?? 0;
      seen.noLocal += (after.noLocalEndpoints?.internal ?? 0) + (after.noLocalEndpoints?.external ?? 0);
      seen.removedServers += before.virtualServers.filter((v) => !after.virtualServers.some((w) => w.key === v.key)).length;
      seen.setFlips += change.emptinessChanged ? 1 : 0;
      before = after;
    }
    // The sequence exercised what it is for (left-out addresses, Local policies, deletions, sets emptied or filled).
    for (const n of Object.values(seen)) expect(n).toBeGreaterThan(0);
  });

  it('hands a shared virtual server to the next claimant in key order when the first goes away', () => {
    const c = new TestCluster();
    const withExternal = (name: string) =>
      makeService('ns', name, (svc) => {
        svc.spec.clusterIP = name === 'a' ? '10.96.0.1' : '10.96.0.2';
        svc.spec.ports = [{ name: 'p', port: 80, protocol: 'TCP' }];
        svc.spec.externalIPs = ['203.0.113.1'];
      });
    c.service(withExternal('a'));
    c.service(withExternal('b'));
    c.endpoints('ns/a:p', [{ ip: '10.180.0.1', port: 80 }]);
    c.endpoints('ns/b:p', [{ ip: '10.180.0.2', port: 80 }]);
    const index = IpvsStateIndex.build(c.serviceMap, c.endpointsMap, options);
    expect(index.virtualServer('203.0.113.1:80/TCP')?.realServers.map((r) => r.key)).toEqual(['10.180.0.1:80']);
    c.serviceMap.delete('ns/a:p');
    index.update('ns/a:p', c.serviceMap, c.endpointsMap);
    expect(index.takeChange().servers).toEqual(['10.96.0.1:80/TCP', '203.0.113.1:80/TCP']);
    expect(index.virtualServer('203.0.113.1:80/TCP')?.realServers.map((r) => r.key)).toEqual(['10.180.0.2:80']);
    expect(index.materialize()).toEqual(buildDesiredIpvsState(c.serviceMap, c.endpointsMap, options));
  });
});
