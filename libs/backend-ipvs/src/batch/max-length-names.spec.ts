/**
 * Issue 20: every length limit of the tools IPVS mode writes to, for the longest valid names
 * (namespace and Service name 63 characters, port name 15), IPv4 and IPv6, with and without
 * endpoints. Measured in a network namespace: ipset 7.17 refuses a set name over 31 characters
 * (IPSET_MAXNAMELEN 32 with its NUL) and an entry comment over 255 bytes; iptables 1.8.9 refuses a
 * chain name over 28 characters and cuts a comment to 255 bytes. By construction no name from the
 * API reaches ipset, ipvsadm or the iptables skeleton (set names and comments are upstream's
 * constants, ipvsadm carries no names): this spec holds that, so a long name cannot break a batch.
 */
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { type IPFamily } from '@kube-proxy/core';
import { renderIpvsIptables } from '../iptables/render-ipvs-iptables.js';
import { makeService, TestCluster } from '../testing/ipvs-fixtures.js';
import { renderIpsetRestore, renderIpvsadmRestore } from './render-batches.js';

const label63 = (tag: string): string => tag + 'x'.repeat(63 - tag.length);
const NS = label63('ns-');
const PORT = 'port-name-15chr';
const IPSET_NAME_MAX = 31;
const IPSET_COMMENT_BYTES_MAX = 255;
const IPTABLES_COMMENT_BYTES_MAX = 255;
const IPTABLES_CHAIN_MAX = 28;

const FAMILIES: ReadonlyArray<{ family: IPFamily; ip: (i: number) => string; ep: (i: number) => string; lb: string; ext: string; range: string }> = [
  { family: 'IPv4', ip: (i) => `10.96.0.${i}`, ep: (i) => `10.244.1.${i}`, lb: '1.2.3.4', ext: '50.60.70.81', range: '100.101.0.0/16' },
  { family: 'IPv6', ip: (i) => `fd00:10:96::${i}`, ep: (i) => `fd00:10:244::${i}`, lb: '2001:db8:200::4', ext: '2001:db8:99::11', range: '2001:db8:100::/64' },
];

function cluster(f: (typeof FAMILIES)[number]): { c: TestCluster; keys: string[] } {
  const c = new TestCluster(f.family);
  const keys: string[] = [];
  const add = (name: string, i: number, endpoints: number): void => {
    const [p] = c.service(
      makeService(NS, name, (svc) => {
        Object.assign(svc.spec, {
          type: 'LoadBalancer',
          clusterIP: f.ip(i),
          clusterIPs: [f.ip(i)],
          ipFamilies: [f.family],
          externalIPs: [f.ext],
          externalTrafficPolicy: 'Local',
          healthCheckNodePort: 32000 + i,
          sessionAffinity: 'ClientIP',
          loadBalancerSourceRanges: [f.range],
          ports: [{ name: PORT, port: 80, protocol: 'TCP', nodePort: 30000 + i }],
        });
        svc.status.loadBalancer = { ingress: [{ ip: f.lb }] };
      }),
    );
    if (p === undefined) throw new Error('the fixture must be a valid service port');
    keys.push(p.name.key);
    if (endpoints > 0) c.endpoints(p.name.key, Array.from({ length: endpoints }, (_, j) => ({ ip: f.ep(i * 10 + j), port: 8080, nodeName: j === 0 ? 'test-hostname' : 'other' })));
  };
  add(label63('no-endpoints-'), 1, 0);
  add(label63('with-endpoints-'), 2, 2);
  return { c, keys };
}

describe.each(FAMILIES)('IPVS batches with maximum-length names ($family)', (f) => {
  const { c, keys } = cluster(f);
  const state = c.state();
  const ipset = renderIpsetRestore(state);
  const ipvsadm = renderIpvsadmRestore(state);
  const iptables = renderIpvsIptables(state, { family: f.family, masqueradeBit: 14, masqueradeAll: false, localDetector: { kind: 'none' }, randomFully: false }).payload;
  const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

  it('the fixture names are the longest valid ones, and both services are in the batches', () => {
    for (const key of keys) expect(key).toHaveLength(143);
    expect(ipvsadm).toContain(f.family === 'IPv6' ? `[${f.ip(1)}]:80` : `${f.ip(1)}:80`);
    expect(ipvsadm).toContain(f.family === 'IPv6' ? `[${f.ep(20)}]:8080` : `${f.ep(20)}:8080`);
    expect(ipset).toMatch(/^add \S+ /m);
  });

  it('ipset: every set name within 31 characters, every comment within 255 bytes', () => {
    for (const line of lines(ipset)) {
      const [verb, name] = line.split(' ');
      expect(['create', 'add', 'del']).toContain(verb);
      expect((name as string).length).toBeLessThanOrEqual(IPSET_NAME_MAX);
      const comment = / comment "([^"]*)"/.exec(line);
      if (comment) expect(Buffer.byteLength(comment[1] as string)).toBeLessThanOrEqual(IPSET_COMMENT_BYTES_MAX);
    }
  });

  it('iptables: every comment within 255 bytes, chain within 28 and matched set within 31 characters', () => {
    let sets = 0;
    for (const line of lines(iptables)) {
      if (line.startsWith(':')) expect((line.slice(1).split(' ')[0] as string).length).toBeLessThanOrEqual(IPTABLES_CHAIN_MAX);
      const tokens = tokenize(line);
      tokens.forEach((t, i) => {
        const next = tokens[i + 1] as string;
        if (t === '--comment') expect(Buffer.byteLength(next)).toBeLessThanOrEqual(IPTABLES_COMMENT_BYTES_MAX);
        if (t === '-A' || t === '-j') expect(next.length).toBeLessThanOrEqual(IPTABLES_CHAIN_MAX);
        if (t === '--match-set') {
          sets++;
          expect(next.length).toBeLessThanOrEqual(IPSET_NAME_MAX);
        }
      });
    }
    expect(sets).toBeGreaterThan(5);
  });

  it('no name from the API reaches any batch', () => {
    for (const text of [ipset, ipvsadm, iptables]) expect(text).not.toContain(NS);
  });
});
