/**
 * readLive of the userspace tracer: the capture chains in the kernel (iptables-save of nat and
 * filter, both variants, the one holding KUBE-PORTALS-CONTAINER), only ever read. The proxy sockets
 * are known from the rules only by their ports and the Service ports the rule comments name; which
 * endpoints a socket forwards to lives in the proxy process, not in the kernel, so a live snapshot
 * leaves them unknown (the running proxy's /debug/trace answers with them).
 */
import type { CommandExecutor, IPFamily, NoRulesFound } from '@kube-proxy/core';
import { parseDnatDestination, readIptablesSaveVariants, savedChain, servicePortOfComment, type SavedRule, type SavedTables } from '@kube-proxy/netfilter-iptables';
import { NODEPORT_CONTAINER, NODEPORT_HOST, PORTALS_CONTAINER, PORTALS_HOST } from '../render/capture-rules.js';
import type { ProxySocketRow } from './proxy-socket-table.js';
import { socketKey, USERSPACE_TRACE_MODE, type UserspaceSnapshot } from './userspace-snapshot.js';

const CAPTURE_CHAINS = [PORTALS_CONTAINER, PORTALS_HOST, NODEPORT_CONTAINER, NODEPORT_HOST];

/** The proxy port a capture rule sends to (REDIRECT --to-ports P, DNAT --to-destination IP:P). */
export function proxyPortOf(rule: SavedRule): number | undefined {
  const target = rule.target;
  if (target?.name === 'REDIRECT') {
    const port = Number((target.options.get('--to-ports') ?? '').split(/[-:]/)[0]);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  }
  if (target?.name === 'DNAT') return parseDnatDestination(target.options.get('--to-destination') ?? '', 0)?.port || undefined;
  return undefined;
}

function protocolOf(rule: SavedRule): 'TCP' | 'UDP' | undefined {
  for (const m of rule.matches) if (m.kind === 'protocol' && !m.negated && (m.protocol === 'tcp' || m.protocol === 'udp')) return m.protocol.toUpperCase() as 'TCP' | 'UDP';
  return undefined;
}

/** The sockets the capture rules send to, named by the rules' comments; endpoints unknown. */
export function socketsOfRules(tables: SavedTables): Map<string, ProxySocketRow> {
  const sockets = new Map<string, ProxySocketRow>();
  for (const chain of CAPTURE_CHAINS) {
    for (const rule of savedChain(tables, 'nat', chain)?.rules ?? []) {
      const port = proxyPortOf(rule);
      const protocol = protocolOf(rule);
      if (port === undefined || protocol === undefined || sockets.has(socketKey(protocol, port))) continue;
      const servicePort = servicePortOfComment(rule.comment) ?? rule.comment ?? '';
      sockets.set(socketKey(protocol, port), { servicePort, protocol, proxyPort: port, serves: chain.startsWith('KUBE-NODEPORT') ? 'external' : 'all', endpoints: null, text: `${servicePort} ${protocol} proxy port ${port}` });
    }
  }
  return sockets;
}

export async function readUserspaceLive(executor: CommandExecutor, family: IPFamily): Promise<UserspaceSnapshot | NoRulesFound> {
  const { reads, commands } = await readIptablesSaveVariants(executor, family, ['nat', 'filter']);
  const read = reads.find((r) => savedChain(r.tables, 'nat', PORTALS_CONTAINER) !== undefined || savedChain(r.tables, 'nat', PORTALS_HOST) !== undefined);
  if (read === undefined) {
    return { found: false, lookedFor: `the userspace capture chains nat/${PORTALS_CONTAINER} and nat/${PORTALS_HOST} (${commands.join(', ') || 'no iptables-save binary'})` };
  }
  return { mode: USERSPACE_TRACE_MODE, family, source: read.command, tables: read.tables, sockets: socketsOfRules(read.tables), listenIP: undefined, endpointsKnown: false };
}
