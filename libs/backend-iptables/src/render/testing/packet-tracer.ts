/**
 * Test support: a TypeScript port of upstream proxier_test.go's packet tracer (tracePacket /
 * runPacketFlowTests) over netfilter-iptables' FakeIPTables, so that upstream's packet-flow
 * expectations can be checked against our payloads, and the node conventions of its fake proxier.
 */
import { FakeIPTables, getChain, type Rule } from '@kube-proxy/netfilter-iptables/testing';

// ---------------------------------------------------------------------------------------------
// Packet tracer (proxier_test.go's iptablesTracer)

/** Conventions of upstream's proxier tests (NewFakeProxier). */
export const TEST_NODE_NAME = 'test-node';
export const TEST_NODE_IP = '192.168.0.2';
export const TEST_NODE_IP_ALT = '192.168.1.2';
export const TEST_EXTERNAL_IP = '192.168.99.11';
export const TEST_NODE_IPV6 = '2001:db8::1';
export const TEST_NODE_IPV6_ALT = '2001:db8:1::2';
export const TEST_EXTERNAL_CLIENT = '203.0.113.2';
export const TEST_EXTERNAL_CLIENT_BLOCKED = '203.0.113.130';
export const TEST_NODE_IPS = [TEST_NODE_IP, TEST_NODE_IP_ALT, TEST_EXTERNAL_IP, TEST_NODE_IPV6, TEST_NODE_IPV6_ALT];

function parseV4(ip: string): number | null {
  const p = ip.split('.');
  if (p.length !== 4 || p.some((x) => !/^\d+$/.test(x))) return null;
  return p.reduce((v, x) => v * 256 + Number(x), 0);
}

function parseV6(ip: string): bigint | null {
  if (!ip.includes(':')) return null;
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head === '' ? [] : head!.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return null;
  return groups.reduce((v, g) => (v << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function cidrMatch(value: string, ip: string): boolean {
  if (value.includes('/')) {
    const [base, bitsText] = value.split('/');
    const bits = Number(bitsText);
    const b4 = parseV4(base!);
    const i4 = parseV4(ip);
    if (b4 !== null) {
      if (i4 === null) return false;
      if (bits === 0) return true;
      const s = 2 ** (32 - bits);
      return Math.floor(b4 / s) === Math.floor(i4 / s);
    }
    const b6 = parseV6(base!);
    const i6 = parseV6(ip);
    if (b6 === null || i6 === null) return false;
    const s = BigInt(128 - bits);
    return b6 >> s === i6 >> s;
  }
  const a4 = parseV4(value);
  if (a4 !== null) return a4 === parseV4(ip);
  const a6 = parseV6(value);
  return a6 !== null && a6 === parseV6(ip);
}

function addressMatches(v: { negated: boolean; value: string }, ip: string): boolean {
  const m = cidrMatch(v.value, ip);
  return (!v.negated && m) || (v.negated && !m);
}

function valueMatches(v: { negated: boolean; value: string }, cmp: string): boolean {
  return v.negated ? v.value !== cmp : v.value === cmp;
}

class Tracer {
  readonly matches: string[] = [];
  readonly outputs: string[] = [];
  markMasq = false;
  private readonly localIPs: Set<string>;

  constructor(
    private readonly ipt: FakeIPTables,
    nodeIPs: readonly string[],
  ) {
    this.localIPs = new Set(['127.0.0.1', '::1', ...nodeIPs]);
  }

  ruleMatches(rule: Rule, sourceIP: string, protocol: string, destIP: string, destPort: string): boolean {
    if (rule.sourceAddress !== undefined && !addressMatches(rule.sourceAddress, sourceIP)) return false;
    if (rule.sourceType !== undefined && !valueMatches(rule.sourceType, this.localIPs.has(sourceIP) ? 'LOCAL' : 'not-matched')) return false;
    if (rule.protocol !== undefined && !valueMatches(rule.protocol, protocol)) return false;
    if (rule.destinationAddress !== undefined && !addressMatches(rule.destinationAddress, destIP)) return false;
    if (rule.destinationType !== undefined && !valueMatches(rule.destinationType, this.localIPs.has(destIP) ? 'LOCAL' : 'not-matched')) return false;
    if (rule.destinationPort !== undefined && !valueMatches(rule.destinationPort, destPort)) return false;
    // Any rule that checks for past state/history does not match.
    if (rule.affinityCheck !== undefined || rule.markCheck !== undefined || rule.ctStateCheck !== undefined) return false;
    return true;
  }

  runChain(table: string, chain: string, sourceIP: string, protocol: string, destIP: string, destPort: string): boolean {
    const c = getChain(this.ipt.dump, table, chain);
    if (c === undefined) return false;
    for (const rule of c.rules) {
      if (rule.jump === undefined) continue;
      if (!this.ruleMatches(rule, sourceIP, protocol, destIP, destPort)) continue;
      this.matches.push(rule.raw);
      switch (rule.jump.value) {
        case 'KUBE-MARK-MASQ':
          this.markMasq = true;
          continue;
        case 'ACCEPT':
        case 'REJECT':
        case 'DROP':
          this.outputs.push(rule.jump.value);
          return true;
        case 'DNAT':
          this.outputs.push(rule.dnatDestination!.value);
          return true;
        default: {
          const terminated = this.runChain(table, rule.jump.value, sourceIP, protocol, destIP, destPort);
          if (terminated && rule.probability === undefined) return true;
        }
      }
    }
    return false;
  }
}

export interface PacketResult {
  matches: string[];
  output: string;
  masq: boolean;
}

/** proxier_test.go's tracePacket. */
export function tracePacket(
  ipt: FakeIPTables,
  sourceIP: string,
  protocol: string,
  destIP: string,
  destPort: string,
  nodeIPs: readonly string[],
): PacketResult {
  const tracer = new Tracer(ipt, nodeIPs);
  tracer.runChain('nat', 'PREROUTING', sourceIP, protocol, destIP, destPort);
  if (tracer.outputs.length !== 0) {
    // Go's strings.Split(output, ":")[0] (upstream only traces IPv4 here).
    destIP = tracer.outputs[0].split(':')[0];
  }
  tracer.runChain('filter', 'KUBE-SERVICES', sourceIP, protocol, destIP, destPort);
  tracer.runChain('filter', 'KUBE-EXTERNAL-SERVICES', sourceIP, protocol, destIP, destPort);
  tracer.runChain('filter', 'KUBE-NODEPORTS', sourceIP, protocol, destIP, destPort);
  tracer.runChain('filter', 'KUBE-PROXY-FIREWALL', sourceIP, protocol, destIP, destPort);
  return { matches: tracer.matches, output: tracer.outputs.join(', '), masq: tracer.markMasq };
}

export interface PacketFlowTest {
  name: string;
  sourceIP: string;
  /** v1.Protocol; default TCP. */
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  destIP: string;
  destPort: number;
  output: string;
  masq?: boolean;
}

/** Runs upstream-style packet flow tests; returns one message per failing case (empty = pass). */
export function runPacketFlowTests(ipt: FakeIPTables, nodeIPs: readonly string[], tests: readonly PacketFlowTest[]): string[] {
  const failures: string[] = [];
  for (const tc of tests) {
    const protocol = (tc.protocol ?? 'TCP').toLowerCase();
    const r = tracePacket(ipt, tc.sourceIP, protocol, tc.destIP, String(tc.destPort), nodeIPs);
    const errors: string[] = [];
    if (r.output !== tc.output) errors.push(`wrong output: expected "${tc.output}" got "${r.output}"`);
    if (r.masq !== (tc.masq ?? false)) errors.push(`wrong masq: expected ${tc.masq ?? false} got ${r.masq}`);
    if (errors.length > 0) {
      failures.push(
        `Test "${tc.name}" of a ${protocol} packet from ${tc.sourceIP} to ${tc.destIP}:${tc.destPort} got result:\n${errors.join('\n')}\n\nBy matching:\n${r.matches.join('\n')}\n`,
      );
    }
  }
  return failures;
}
