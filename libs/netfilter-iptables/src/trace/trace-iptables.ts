import type { TraceNode, TracePacket } from '@kube-proxy/core';
import { canonicalIP, isLoopbackIP, parseIP } from '@kube-proxy/core';
import { ChainWalker } from './chain-walker.js';
import { markBitOf } from './mark-target.js';
import type { PacketView } from './rule-match.js';
import type { SavedTables } from './saved-tables.js';
import type { IptablesTrace, IptablesTraceOptions, IptablesVerdict } from './trace-types.js';

const DEFAULT_MASQUERADE_MARK = 0x4000;
const DEFAULT_DROP_MARK = 0x8000;

/**
 * Traces the first packet of a connection through the nat and filter tables as the kernel takes it:
 * a locally generated packet through nat OUTPUT then filter OUTPUT (and filter INPUT when its
 * destination is the node itself), any other through nat PREROUTING then filter INPUT (a destination
 * of the node) or FORWARD. In the built-in chains only jumps to KUBE-* chains are followed. The
 * masquerade mark is the one KUBE-MARK-MASQ sets and nat POSTROUTING (KUBE-POSTROUTING) acts on.
 * Modelled on upstream's iptablesTracer (pkg/proxy/iptables/proxier_test.go): every branch of a
 * probability jump is visited, and checks of earlier packets (`-m recent --rcheck`) never match.
 */
export function traceIptables(tables: SavedTables, packet: TracePacket, node: TraceNode, options: IptablesTraceOptions = {}): IptablesTrace {
  const view = packetView(packet, node, options);
  const walker = new ChainWalker(tables, view, {
    masquerade: options.masqueradeMark ?? markBitOf(tables, 'KUBE-MARK-MASQ', DEFAULT_MASQUERADE_MARK),
    drop: options.dropMark ?? markBitOf(tables, 'KUBE-MARK-DROP', DEFAULT_DROP_MARK),
  });
  const natHook = packet.locallyGenerated ? 'OUTPUT' : 'PREROUTING';
  walker.run('nat', natHook);
  const dropMark = walker.dropMarkRule;
  applyNatToView(walker, view, node);
  const filterHooks = filterHooksOf(packet, view);
  if (walker.refused === undefined && dropMark === undefined) {
    for (const hook of filterHooks) {
      walker.run('filter', hook);
      if (walker.refused) break;
    }
  }
  const masqueradeBit = options.masqueradeMark ?? markBitOf(tables, 'KUBE-MARK-MASQ', DEFAULT_MASQUERADE_MARK);
  return {
    steps: walker.steps,
    dnat: walker.dnat,
    ...(walker.redirect ? { redirect: walker.redirect } : {}),
    ...verdictOf(walker),
    masquerade: (view.mark & masqueradeBit) !== 0,
    ...(walker.masqueradeRule ? { masqueradeRule: walker.masqueradeRule } : {}),
    filterHooks,
    natHook,
    filterDestination: { ip: view.destIP, port: view.destPort },
  };
}

function packetView(packet: TracePacket, node: TraceNode, options: IptablesTraceOptions): PacketView {
  const source = parseIP(packet.sourceIP);
  const destination = parseIP(packet.destIP);
  if (source === undefined || destination === undefined) {
    throw new Error(`not an IP address: ${source === undefined ? packet.sourceIP : packet.destIP}`);
  }
  const localIPs = new Set<string>();
  for (const address of node.addresses) {
    const ip = canonicalIP(address);
    if (ip !== undefined) localIPs.add(ip);
  }
  return {
    packet,
    protocol: packet.protocol.toLowerCase(),
    source,
    sourceIP: canonicalIP(packet.sourceIP) as string,
    destination,
    destIP: canonicalIP(packet.destIP) as string,
    destPort: packet.destPort,
    ...(packet.inInterface !== undefined && !packet.locallyGenerated ? { inInterface: packet.inInterface } : {}),
    mark: 0,
    dnatted: false,
    localIPs,
    options,
  };
}

/**
 * The filter table sees the destination nat chose: the first DNAT choice (upstream's tracer does the
 * same), or for a REDIRECT the node itself on the redirect port.
 */
function applyNatToView(walker: ChainWalker, view: PacketView, node: TraceNode): void {
  const first = walker.dnat[0];
  if (first) {
    view.destIP = first.ip;
    view.destination = parseIP(first.ip) ?? view.destination;
    view.destPort = first.port;
    view.dnatted = true;
  } else if (walker.redirect) {
    const local = view.packet.locallyGenerated ? (view.packet.family === 'IPv6' ? '::1' : '127.0.0.1') : (node.addresses[0] ?? view.destIP);
    view.destIP = canonicalIP(local) ?? view.destIP;
    view.destination = parseIP(view.destIP) ?? view.destination;
    view.destPort = walker.redirect.port;
    view.dnatted = true;
  }
}

function filterHooksOf(packet: TracePacket, view: PacketView): string[] {
  const local = view.localIPs.has(view.destIP) || isLoopbackIP(view.destIP);
  if (packet.locallyGenerated) return local ? ['OUTPUT', 'INPUT'] : ['OUTPUT'];
  return [local ? 'INPUT' : 'FORWARD'];
}

function verdictOf(walker: ChainWalker): { verdict: IptablesVerdict; decidedBy?: IptablesTrace['decidedBy'] } {
  if (walker.dropMarkRule) return { verdict: 'DROP', decidedBy: walker.dropMarkRule };
  if (walker.refused) return { verdict: walker.refused.verdict, decidedBy: walker.refused.ref };
  const first = walker.dnat[0];
  if (first) return { verdict: 'DNAT', decidedBy: { table: 'nat', chain: first.chain, rule: first.rule, ...(first.comment !== undefined ? { comment: first.comment } : {}) } };
  if (walker.redirect) return { verdict: 'DNAT', decidedBy: walker.redirect.ref };
  return { verdict: 'ACCEPT' };
}
