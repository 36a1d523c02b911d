// Issue 20: one valid Service whose `namespace/name:port` is over 128 bytes (63 + 1 + 63 + 1 + 15 =
// 143) failed every transaction on its no-endpoint-services element comment, so the node got no
// rules at all. The in-memory table refuses what nft refuses (comments over 128 bytes, names over
// 255), so these syncs fail as the kernel's did.
import type { IPFamily, V1Service } from '@kube-proxy/core';
import { COMMENT_BYTES_MAX, NAME_BYTES_MAX, utf8Length } from '../nft/nft-limits.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, type FakeProxier } from '../testing/fake-proxier.js';

/** A valid DNS label of exactly 63 characters, distinct per `tag`. */
const label63 = (tag: string): string => tag + 'x'.repeat(63 - tag.length);
const NS = label63('ns-');
const PORT = 'port-name-15chr';

interface Fixture {
  readonly family: IPFamily;
  readonly clusterIP: (i: number) => string;
  readonly endpointIP: (i: number) => string;
  readonly lbIP: string;
  readonly externalIP: string;
}

const FIXTURES: readonly Fixture[] = [
  { family: 'IPv4', clusterIP: (i) => `172.30.0.${i}`, endpointIP: (i) => `10.180.0.${i}`, lbIP: '1.2.3.4', externalIP: '192.168.99.11' },
  { family: 'IPv6', clusterIP: (i) => `fd00:10:96::${i}`, endpointIP: (i) => `fd00:10:180::ffff:${i}`, lbIP: '2001:db8:200::4', externalIP: '2001:db8:99::11' },
];

function longService(f: Fixture, name: string, i: number): V1Service {
  return makeTestService(NS, name, (s) => {
    Object.assign(s.spec, {
      type: 'LoadBalancer',
      clusterIP: f.clusterIP(i),
      ipFamilies: [f.family],
      externalIPs: [f.externalIP],
      sessionAffinity: 'ClientIP',
      ports: [{ name: PORT, port: 80, protocol: 'TCP', nodePort: 30000 + i }],
      loadBalancerSourceRanges: [f.family === 'IPv6' ? '2001:db8:100::/64' : '203.0.113.0/25'],
    });
    s.status.loadBalancer = { ingress: [{ ip: f.lbIP }] };
  });
}

/** A long-named service without endpoints, one with endpoints, and a short-named healthy one. */
function load(fp: FakeProxier, f: Fixture): void {
  fp.proxier.onServiceAdd(longService(f, label63('no-endpoints-'), 1));
  fp.proxier.onServiceAdd(longService(f, label63('with-endpoints-'), 2));
  fp.proxier.onEndpointSliceAdd(
    makeTestEndpointSlice(NS, label63('with-endpoints-'), 1, (e) => {
      e.addressType = f.family;
      e.endpoints = [{ addresses: [f.endpointIP(1)] }, { addresses: [f.endpointIP(2)] }];
      e.ports = [{ name: PORT, port: 8080, protocol: 'TCP' }];
    }),
  );
  fp.proxier.onServiceAdd(makeTestService('ns', 'healthy', (s) => Object.assign(s.spec, { clusterIP: f.clusterIP(3), ipFamilies: [f.family], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] })));
  fp.proxier.onEndpointSliceAdd(
    makeTestEndpointSlice('ns', 'healthy', 1, (e) => {
      e.addressType = f.family;
      e.endpoints = [{ addresses: [f.endpointIP(3)] }];
      e.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
    }),
  );
}

const COMMENT = / comment "([^"]*)"/g;

describe.each(FIXTURES)('nftables with maximum-length names ($family)', (f) => {
  it('programs every service, and every comment and name is within nft limits', async () => {
    const fp = newFakeProxier(f.family);
    load(fp, f);
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.transactionFailures).toBe(0);
    expect(fp.proxier.stats.syncs).toBe(1);
    const lines = fp.nft.transactions.flatMap((tx) => tx.lines);
    let comments = 0;
    for (const line of lines) {
      for (const m of line.matchAll(COMMENT)) {
        comments++;
        expect(utf8Length(m[1])).toBeLessThanOrEqual(COMMENT_BYTES_MAX);
      }
    }
    expect(comments).toBeGreaterThan(0);
    const t = fp.nft.table;
    for (const name of [...t.chainNames(), ...t.containerNames()]) expect(utf8Length(name)).toBeLessThanOrEqual(NAME_BYTES_MAX);
    // The long services' chains, endpoint chains and affinity sets are there, and the healthy one.
    expect(t.chainNames().filter((c) => c.includes(`${NS}/with-endpoints-`) && c.startsWith('endpoint-'))).toHaveLength(2);
    expect(t.setNames().filter((s) => s.startsWith('affinity-'))).toHaveLength(2);
    expect(t.chainNames().some((c) => c.includes('ns/healthy/tcp/http'))).toBe(true);
  });

  it('writes the no-endpoint-services element that used to fail, its comment cut to 128 bytes', async () => {
    const fp = newFakeProxier(f.family);
    load(fp, f);
    await fp.proxier.syncProxyRules();
    const full = `${NS}/${label63('no-endpoints-')}:${PORT}`;
    expect(full).toHaveLength(143);
    const key = `${f.clusterIP(1)} . tcp . 80`;
    expect(fp.nft.table.elementsOf('no-endpoint-services')?.get(key)).toBe(`${key} comment "${full.slice(0, 128)}" : goto reject-chain`);
  });
});
