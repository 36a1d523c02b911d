/**
 * Defence in depth (issue 10): renderRuleset fed hostile names directly, bypassing the source edge's
 * validation, must write exactly the rules it writes for a benign name, with the name only as
 * comment-safe text; values that are not core's canonical text are refused; and the final byte
 * check catches anything that would still break a line.
 */
import type { Endpoint, ServicePort, ServicePortName } from '@kube-proxy/core';
import type { HostileName } from '@kube-proxy/core/testing';
import { assertRestoreLine, nullLogger, servicePortsFromService, UnsafeRestoreTextError } from '@kube-proxy/core';
import { BENIGN_NAME, HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { ChainNameCache } from './chain-names.js';
import { commentName } from './comment-name.js';
import type { RenderInput, RenderOptions } from './render-ruleset.js';
import { renderRuleset } from './render-ruleset.js';
import { TEST_NODE_NAME } from './testing/packet-tracer.js';
import { fakeProxierOptions, makeEndpoint, makeTestService } from './testing/fake-proxier.js';

function portOf(svc: ReturnType<typeof makeTestService>): ServicePort {
  const [p] = servicePortsFromService(svc, 'IPv4', nullLogger);
  if (p === undefined) throw new Error('fixture service has no port');
  return p;
}

/** Three benign service ports covering every comment the renderer writes (names replaced below). */
const BASE = {
  // LoadBalancer with externalIPs, source ranges, Local policy, health check node port and affinity.
  lb: portOf(
    makeTestService('ns', 'lb', (svc) => {
      svc.spec.type = 'LoadBalancer';
      svc.spec.clusterIP = '172.30.0.41';
      svc.spec.ports = [{ name: 'p', port: 80, protocol: 'TCP', nodePort: 3001 }];
      svc.spec.externalIPs = ['192.168.99.11'];
      svc.spec.loadBalancerSourceRanges = ['203.0.113.0/25', '192.168.0.0/24'];
      svc.spec.externalTrafficPolicy = 'Local';
      svc.spec.healthCheckNodePort = 30000;
      svc.spec.sessionAffinity = 'ClientIP';
      svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
    }),
  ),
  // ClusterIP without endpoints: REJECT rules with "has no endpoints".
  none: portOf(
    makeTestService('ns', 'none', (svc) => {
      svc.spec.clusterIP = '172.30.0.42';
      svc.spec.ports = [{ name: 'p', port: 53, protocol: 'UDP' }];
    }),
  ),
  // NodePort with Local policy and only remote endpoints: DROP rules with "has no local endpoints".
  remote: portOf(
    makeTestService('ns', 'remote', (svc) => {
      svc.spec.type = 'NodePort';
      svc.spec.clusterIP = '172.30.0.43';
      svc.spec.ports = [{ name: 'p', port: 81, protocol: 'SCTP', nodePort: 3002 }];
      svc.spec.externalTrafficPolicy = 'Local';
      svc.spec.internalTrafficPolicy = 'Local';
    }),
  ),
};

/** A ServicePortName built by hand (no validation on the way), as a hostile caller could. */
function rawName(namespace: string, name: string, port: string, protocol: ServicePort['protocol']): ServicePortName {
  const nn = `${namespace}/${name}`;
  return { namespace, name, port, protocol, key: port === '' ? nn : `${nn}:${port}` };
}

interface Scenario {
  input: RenderInput;
  /** Service port keys in render order, with their comment text. */
  keys: string[];
  namespacedNames: string[];
}

/**
 * The three services named after `h` (distinguished by a prefix on the namespace, so that they sort
 * the same way for every name and stay distinct after a long name is cut).
 */
function scenario(h: HostileName): Scenario {
  const serviceMap = new Map<string, ServicePort>();
  const endpointsMap = new Map<string, Endpoint[]>();
  const keys: string[] = [];
  const namespacedNames: string[] = [];
  const add = (prefix: string, base: ServicePort, endpoints: Endpoint[]): void => {
    const name = rawName(`${prefix}-${h.namespace}`, h.name, h.port, base.protocol);
    serviceMap.set(name.key, { ...base, name });
    if (endpoints.length > 0) endpointsMap.set(name.key, endpoints);
    keys.push(name.key);
    namespacedNames.push(`${name.namespace}/${name.name}`);
  };
  add('a', BASE.lb, [makeEndpoint({ ip: '10.180.0.1', nodeName: TEST_NODE_NAME }, 80), makeEndpoint({ ip: '10.180.0.2', nodeName: 'other' }, 80)]);
  add('b', BASE.none, []);
  add('c', BASE.remote, [makeEndpoint({ ip: '10.180.1.1', nodeName: 'other' }, 81)]);
  return { input: { serviceMap, endpointsMap, changedServices: null, existingNatChains: null }, keys, namespacedNames };
}

const OPTIONS: RenderOptions = fakeProxierOptions();

function render(input: RenderInput, names = new ChainNameCache()): string {
  return renderRuleset(input, OPTIONS, names).payload;
}

/**
 * The payload with each service's comment text replaced by the benign one and every per-service
 * chain hash by its order of appearance: what must be identical for a benign and a hostile name.
 */
function normalise(payload: string, s: Scenario, benign: Scenario): string {
  let out = payload;
  s.keys.forEach((key, i) => {
    out = out.split(commentName(key)).join(commentName(benign.keys[i] as string));
  });
  const seen = new Map<string, string>();
  return out.replace(/KUBE-(SVC|SVL|EXT|FW|SEP)-[A-Z2-7]{16}/g, (chain, kind: string) => {
    let id = seen.get(chain);
    if (id === undefined) {
      id = `KUBE-${kind}-#${seen.size}`;
      seen.set(chain, id);
    }
    return id;
  });
}

const lines = (payload: string): string[] => payload.split('\n').slice(0, -1);
const acceptRules = (payload: string): string[] => lines(payload).filter((l) => tokenize(l).join(' ').includes('-j ACCEPT'));

const benign = scenario(BENIGN_NAME);
const benignPayload = render(benign.input);

describe('renderRuleset with hostile names (bypassing validation)', () => {
  it('the benign scenario writes every kind of comment the renderer has', () => {
    for (const words of [' cluster IP"', ' external IP"', ' loadbalancer IP"', ' health check node port"', ' has no endpoints"', ' has no local endpoints"', ' -> 10.180.0.1:80"', 'external destinations"', 'will be dropped by KUBE-PROXY-FIREWALL"', 'traffic not accepted by KUBE-FW-']) {
      expect(benignPayload).toContain(words);
    }
    expect(benignPayload).toContain('--comment a-default/web:http -m tcp -p tcp --dport 3001');
  });

  it.each(HOSTILE_NAMES.map((h) => [h.label, h] as const))('%s: exactly the benign rules, the name only as comment text', (_label, h) => {
    const s = scenario(h);
    const payload = render(s.input);

    // Same rules, same order, same count as for the benign name.
    expect(lines(payload)).toHaveLength(lines(benignPayload).length);
    expect(normalise(payload, s, benign)).toBe(normalise(benignPayload, benign, benign));

    // No injected rule: nothing in INPUT, no ACCEPT the benign payload does not have.
    expect(payload).not.toMatch(/^-A INPUT/m);
    expect(acceptRules(payload)).toHaveLength(acceptRules(benignPayload).length);
    expect(payload).not.toContain('" -j ACCEPT');

    // Every line is one safe line; every comment is one argument that closes on its own line.
    for (const [i, line] of lines(payload).entries()) {
      assertRestoreLine(line, i + 1);
      const tokens = tokenize(line);
      tokens.forEach((t, j) => {
        if (t !== '--comment') return;
        const next = tokens[j + 2];
        expect(next === undefined || next.startsWith('-')).toBe(true);
        expect((tokens[j + 1] as string).length).toBeLessThanOrEqual(255);
      });
    }
    // The intended comment text is there: the name, percent-encoded.
    expect(payload).toContain(`--comment "${commentName(s.keys[0] as string)} cluster IP"`);
    expect(payload).toContain(`--comment "${commentName(s.keys[1] as string)} has no endpoints"`);
    expect(payload).toContain(`--comment ${commentName(s.keys[2] as string)} -m sctp`);

    // iptables semantics (the dry-run model) accept it and hold no rule in INPUT.
    const tables = new InMemoryTables();
    tables.restore(payload, { noFlush: true });
    expect(tables.rules('filter', 'INPUT')).toEqual([]);
  });

  it.each(HOSTILE_NAMES.map((h) => [h.label, h] as const))('%s: a partial sync of the hostile services writes the benign rules too', (_label, h) => {
    const s = scenario(h);
    const names = new ChainNameCache();
    const benignNames = new ChainNameCache();
    render(s.input, names);
    render(benign.input, benignNames);
    const partial = render({ ...s.input, changedServices: new Set(s.namespacedNames) }, names);
    const benignPartial = render({ ...benign.input, changedServices: new Set(benign.namespacedNames) }, benignNames);
    expect(normalise(partial, s, benign)).toBe(normalise(benignPartial, benign, benign));
  });
});

describe('renderRuleset refuses values that are not canonical text', () => {
  const good = scenario(BENIGN_NAME);
  const key = good.keys[0] as string;
  const base = good.input.serviceMap.get(key) as ServicePort;
  const eps = good.input.endpointsMap.get(key) as Endpoint[];

  const withService = (svc: Partial<Record<keyof ServicePort, unknown>>): RenderInput => ({
    ...good.input,
    serviceMap: new Map([...good.input.serviceMap, [key, { ...base, ...svc } as ServicePort]]),
  });
  const withEndpoint = (ep: Partial<Record<keyof Endpoint, unknown>>): RenderInput => ({
    ...good.input,
    endpointsMap: new Map([...good.input.endpointsMap, [key, [{ ...eps[0], ...ep } as Endpoint, ...eps.slice(1)]]]),
  });

  it.each([
    ['a cluster IP with arguments', withService({ clusterIP: '10.0.0.1 -j ACCEPT' })],
    ['an external IP with a newline', withService({ externalIPs: ['192.168.99.11\n-A INPUT -j ACCEPT'] })],
    ['a load balancer IP with a quote', withService({ loadBalancerVIPs: ['1.2.3.4"'] })],
    ['a source range that is not a CIDR', withService({ loadBalancerSourceRanges: ['0.0.0.0/0 -j ACCEPT'] })],
    ['a protocol outside TCP/UDP/SCTP', withService({ protocol: 'tcp -j ACCEPT' })],
    ['a port that is text', withService({ port: '80 -j ACCEPT' })],
    ['a node port out of range', withService({ nodePort: 70000 })],
    ['a health check node port that is not an integer', withService({ healthCheckNodePort: 1.5 })],
    ['an endpoint IP with a newline', withEndpoint({ ip: '10.180.0.1\n-A INPUT -j ACCEPT' })],
    ['an endpoint key with a space', withEndpoint({ key: '10.180.0.1:80 -j ACCEPT' })],
  ])('refuses %s and produces no payload', (_label, input) => {
    expect(() => render(input)).toThrow(UnsafeRestoreTextError);
    expect(() => render(input)).toThrow(/not the canonical text core produces/);
  });

  it.each([
    ['a masquerade mark with arguments', { masqueradeMark: '0x4000 -j ACCEPT' }],
    ['a local-traffic CIDR with a newline', { localDetector: { kind: 'cidr', cidr: '10.0.0.0/8\n-A INPUT -j ACCEPT' } }],
    ['a bridge interface with a space', { localDetector: { kind: 'bridge-interface', interfaceName: 'cbr0 -j ACCEPT' } }],
    ['an interface prefix with a quote', { localDetector: { kind: 'interface-name-prefix', prefix: 'veth"' } }],
    ['a node port address that is not an IP', { nodePortAddresses: { all: false, ips: ['127.0.0.1 -j ACCEPT'] } }],
  ] as Array<[string, Partial<RenderOptions>]>)('refuses %s in the options', (_label, overrides) => {
    expect(() => renderRuleset(good.input, { ...OPTIONS, ...overrides }, new ChainNameCache())).toThrow(UnsafeRestoreTextError);
  });

  it('checks a changed ServicePort object again, though the same object is checked only once', () => {
    const names = new ChainNameCache();
    expect(render(good.input, names)).toBe(benignPayload);
    expect(render(good.input, names)).toBe(benignPayload);
    expect(() => render(withService({ clusterIP: '10.0.0.1 -j ACCEPT' }), names)).toThrow(UnsafeRestoreTextError);
    expect(() => render(withEndpoint({ ip: '10.180.0.1 -j ACCEPT' }), names)).toThrow(UnsafeRestoreTextError);
    // A refused render leaves the cache and buffers usable.
    expect(render(good.input, names)).toBe(benignPayload);
  });
});

describe("renderRuleset's final byte check", () => {
  // Stale chain names come from the kernel's iptables-save and are written as they are: the one
  // place left where no per-value check applies, so the payload check is what catches them.
  it.each([
    ['a newline', 'KUBE-SVC-AAAAAAAAAAAAAAAA\n-A INPUT -j ACCEPT'],
    ['a latin1 alias of a newline (U+010A)', 'KUBE-SEP-AAAAAAAAAAAAAAAA\u010A-A INPUT -j ACCEPT'],
    ['a NUL byte', 'KUBE-FW-AAAAAAAAAAAAAAAA\0'],
    ['a carriage return', 'KUBE-EXT-AAAAAAAAAAAAAAAA\r'],
    ['an over-long line', `KUBE-SVL-${'A'.repeat(5000)}`],
  ])('refuses a payload that a stale chain name with %s would break', (_label, chain) => {
    const input: RenderInput = { ...benign.input, existingNatChains: new Set([chain]) };
    expect(() => render(input)).toThrow(UnsafeRestoreTextError);
  });

  it('passes the same stale-chain deletion with an ordinary name', () => {
    const payload = render({ ...benign.input, existingNatChains: new Set(['KUBE-SVC-AAAAAAAAAAAAAAAA']) });
    expect(payload).toContain('\n-X KUBE-SVC-AAAAAAAAAAAAAAAA\n');
  });
});
