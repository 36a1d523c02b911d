/**
 * Issue 20: every length limit of iptables respected for the longest valid names (namespace and
 * Service name 63 characters, port name 15: `ns/name:port` is 143). Measured with iptables 1.8.9
 * (legacy and nft) in a network namespace: a comment over 255 bytes is silently cut to 255
 * (xt_comment's XT_MAX_COMMENT_LEN 256 with its NUL), so it cannot fail a restore but would lose
 * its end; a chain name over 28 characters fails the whole restore ("Invalid chain name").
 * Upstream writes the name as it is in comments, so the longest valid name must come out whole.
 */
import type { Endpoint, IPFamily, ServicePort } from '@kube-proxy/core';
import { InMemoryTables, tokenize } from '@kube-proxy/netfilter-iptables';
import { nullLogger, servicePortsFromService } from '@kube-proxy/core';
import { ChainNameCache } from './chain-names.js';
import { renderRuleset } from './render-ruleset.js';
import { TEST_NODE_NAME } from './testing/packet-tracer.js';
import { fakeProxierOptions, makeEndpoint, makeTestService } from './testing/fake-proxier.js';

const label63 = (tag: string): string => tag + 'x'.repeat(63 - tag.length);
const NS = label63('ns-');
const PORT = 'port-name-15chr';
/** xt_comment's limit, less its NUL. */
const COMMENT_BYTES_MAX = 255;
/** iptables' chain name limit (XT_EXTENSION_MAXNAMELEN 29 less its NUL). */
const CHAIN_CHARS_MAX = 28;

const FAMILIES: ReadonlyArray<{ family: IPFamily; ip: (i: number) => string; ep: (i: number) => string; lb: string; ext: string; range: string }> = [
  { family: 'IPv4', ip: (i) => `172.30.0.${i}`, ep: (i) => `10.180.0.${i}`, lb: '1.2.3.4', ext: '192.168.99.11', range: '203.0.113.0/25' },
  { family: 'IPv6', ip: (i) => `fd00:10:96::${i}`, ep: (i) => `fd00:10:180::ffff:${i}`, lb: '2001:db8:200::4', ext: '2001:db8:99::11', range: '2001:db8:100::/64' },
];

function render(f: (typeof FAMILIES)[number]): { payload: string; keys: string[] } {
  const serviceMap = new Map<string, ServicePort>();
  const endpointsMap = new Map<string, Endpoint[]>();
  const keys: string[] = [];
  const add = (name: string, i: number, endpoints: number): void => {
    const svc = makeTestService(NS, name, (s) => {
      Object.assign(s.spec, {
        type: 'LoadBalancer',
        clusterIP: f.ip(i),
        clusterIPs: [f.ip(i)],
        ipFamilies: [f.family],
        externalIPs: [f.ext],
        sessionAffinity: 'ClientIP',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000 + i,
        loadBalancerSourceRanges: [f.range],
        ports: [{ name: PORT, port: 80, protocol: 'TCP', nodePort: 30000 + i }],
      });
      s.status.loadBalancer = { ingress: [{ ip: f.lb }] };
    });
    const [port] = servicePortsFromService(svc, f.family, nullLogger);
    if (port === undefined) throw new Error('the fixture must be a valid service port');
    serviceMap.set(port.name.key, port);
    keys.push(port.name.key);
    const eps = Array.from({ length: endpoints }, (_, j) => makeEndpoint({ ip: f.ep(i * 10 + j), nodeName: j === 0 ? TEST_NODE_NAME : 'other' }, 8080));
    if (eps.length > 0) endpointsMap.set(port.name.key, eps);
  };
  add(label63('no-endpoints-'), 1, 0);
  add(label63('with-endpoints-'), 2, 2);
  const result = renderRuleset({ serviceMap, endpointsMap, changedServices: null, existingNatChains: null }, fakeProxierOptions(f.family), new ChainNameCache());
  return { payload: result.payload, keys };
}

describe.each(FAMILIES)('iptables rules with maximum-length names ($family)', (f) => {
  const { payload, keys } = render(f);
  const lines = payload.split('\n').slice(0, -1);

  it('the fixture names are the longest valid ones', () => {
    for (const key of keys) expect(key.length).toBe(143);
  });

  it('every comment fits xt_comment and carries the whole name', () => {
    let comments = 0;
    for (const line of lines) {
      const tokens = tokenize(line);
      tokens.forEach((t, i) => {
        if (t !== '--comment') return;
        comments++;
        expect(Buffer.byteLength(tokens[i + 1] as string, 'utf8')).toBeLessThanOrEqual(COMMENT_BYTES_MAX);
      });
    }
    expect(comments).toBeGreaterThan(10);
    expect(payload).toContain(`--comment "${keys[1]} cluster IP"`);
    expect(payload).toContain(`--comment "${keys[0]} has no endpoints"`);
    expect(payload).toContain(`"other traffic to ${keys[1]} will be dropped by KUBE-PROXY-FIREWALL"`);
  });

  it('every chain name fits iptables', () => {
    const chains = new Set<string>();
    for (const line of lines) {
      const tokens = tokenize(line);
      if (line.startsWith(':')) chains.add(line.slice(1).split(' ')[0] as string);
      tokens.forEach((t, i) => {
        if (t === '-A' || t === '-j' || t === '-X') chains.add(tokens[i + 1] as string);
      });
    }
    expect(chains.size).toBeGreaterThan(10);
    for (const c of chains) expect(c.length).toBeLessThanOrEqual(CHAIN_CHARS_MAX);
  });

  it('iptables semantics accept the payload', () => {
    const tables = new InMemoryTables();
    expect(() => tables.restore(payload, { noFlush: true })).not.toThrow();
  });
});
