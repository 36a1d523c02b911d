/**
 * Test support: upstream proxier_test.go's tracePacket / runPacketFlowTests over netfilter-iptables'
 * FakeIPTables, answered by the production tracer (traceIptables), so that upstream's packet-flow
 * expectations check both our payloads and the tracer `kube-proxy trace` uses; and the node
 * conventions of upstream's fake proxier. Every flow is answered twice: by the engine (upstream's
 * output, endpoints in rule order) and by the backend's ModeTracer over the same tables as a --dry-run
 * snapshot (the PacketTrace contract `trace -o json` prints), and both must give upstream's answer.
 */
import type { PacketTrace, TracePacket, TraceProtocol } from '@kube-proxy/core';
import { ipFamilyOf } from '@kube-proxy/core';
import { parseIptablesSave, traceIptables, type IptablesTrace } from '@kube-proxy/netfilter-iptables';
import { dumpToString, type FakeIPTables } from '@kube-proxy/netfilter-iptables/testing';
import { iptablesTracer } from '../../trace/iptables-tracer.js';

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

export interface PacketResult {
  matches: string[];
  output: string;
  masq: boolean;
  /** The same packet through the ModeTracer (PacketTrace contract). */
  contract: PacketTrace;
}

/**
 * proxier_test.go's tracePacket, answered by the production tracer (netfilter-iptables' traceIptables)
 * over the fake's current tables. The output is upstream's: the DNAT destinations joined by ", ", or
 * the filter verdict (REJECT, DROP, or ACCEPT when a filter rule accepted the packet), or "".
 */
export function tracePacket(
  ipt: FakeIPTables,
  sourceIP: string,
  protocol: string,
  destIP: string,
  destPort: string,
  nodeIPs: readonly string[],
): PacketResult {
  const saved = dumpToString(ipt.dump);
  const tables = parseIptablesSave(saved);
  const packet: TracePacket = {
    family: ipFamilyOf(destIP) ?? 'IPv4',
    protocol: protocol.toUpperCase() as TraceProtocol,
    sourceIP,
    destIP,
    destPort: Number(destPort),
    locallyGenerated: nodeIPs.includes(sourceIP),
  };
  const node = { name: TEST_NODE_NAME, addresses: nodeIPs };
  const trace = traceIptables(tables, packet, node);
  const contract = iptablesTracer.trace(iptablesTracer.fromDryRun(saved, packet.family), packet, node);
  return { matches: trace.steps.map((s) => s.rule), output: upstreamOutput(trace), masq: trace.masquerade, contract };
}

/**
 * Upstream's output read from a PacketTrace: the endpoints (the contract sorts them, so the
 * expectation is compared sorted too), the refusal verdict, "ACCEPT" for an explicit filter accept.
 */
function contractOutput(t: PacketTrace): string {
  if (t.verdict === 'DNAT') return t.endpoints.join(', ');
  if (t.verdict === 'REJECT' || t.verdict === 'DROP') return t.verdict;
  return t.reason.startsWith('accepted by filter/') ? 'ACCEPT' : '';
}

function sortedOutput(output: string): string {
  return output.includes(':') ? output.split(', ').sort().join(', ') : output;
}

function upstreamOutput(trace: IptablesTrace): string {
  if (trace.verdict === 'REJECT' || trace.verdict === 'DROP') return trace.verdict;
  if (trace.dnat.length > 0) return trace.dnat.map((d) => d.destination).join(', ');
  return trace.steps.some((s) => s.table === 'filter' && s.action === 'accept') ? 'ACCEPT' : '';
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
    const viaContract = contractOutput(r.contract);
    if (viaContract !== sortedOutput(tc.output)) errors.push(`ModeTracer: wrong output: expected "${sortedOutput(tc.output)}" got "${viaContract}"`);
    if (r.contract.masquerade !== (tc.masq ?? false)) errors.push(`ModeTracer: wrong masq: expected ${tc.masq ?? false} got ${r.contract.masquerade}`);
    if (errors.length > 0) {
      failures.push(
        `Test "${tc.name}" of a ${protocol} packet from ${tc.sourceIP} to ${tc.destIP}:${tc.destPort} got result:\n${errors.join('\n')}\n\nBy matching:\n${r.matches.join('\n')}\n`,
      );
    }
  }
  return failures;
}
