/**
 * What the userspace tracer reads: the capture chains (iptables nat KUBE-PORTALS-CONTAINER/-HOST,
 * KUBE-NODEPORT-CONTAINER/-HOST and filter KUBE-NODEPORT-NON-LOCAL, with the jumps to them from the
 * built-in chains) and the proxy sockets they send to. From --dry-run, the block's socket table and
 * capture payload (the payload does not hold the jumps the proxier ensures separately, so they are
 * added here exactly as the proxier writes them); live, the kernel's tables, where the sockets are
 * known only by the proxy ports the rules redirect to.
 */
import type { IPFamily, RuleSnapshot } from '@kube-proxy/core';
import { joinArgs, parseIptablesSave, type SavedTables } from '@kube-proxy/netfilter-iptables';
import { USERSPACE_JUMPS } from '../cleanup.js';
import { captureJumpArgs } from '../proxier/capture-expectations.js';
import { parseProxySocketTable, type ProxySocketRow } from './proxy-socket-table.js';

export const USERSPACE_TRACE_MODE = 'userspace';

export interface UserspaceSnapshot extends RuleSnapshot {
  readonly mode: typeof USERSPACE_TRACE_MODE;
  readonly tables: SavedTables;
  /** Proxy sockets by `PROTOCOL port`. */
  readonly sockets: ReadonlyMap<string, ProxySocketRow>;
  readonly listenIP: string | undefined;
  /** False when read from the kernel: the endpoints live in the proxy process. */
  readonly endpointsKnown: boolean;
}

export function socketKey(protocol: string, port: number): string {
  return `${protocol.toUpperCase()} ${port}`;
}

/** The jumps from the built-in chains, in the order the proxier leaves them (portal jumps inserted first, node-port jumps appended). */
export function captureJumpsText(): string {
  const lines = (table: string): string[] =>
    USERSPACE_JUMPS.filter((j) => j.table === table)
      .sort((a, b) => Number(a.to.startsWith('KUBE-NODEPORT-')) - Number(b.to.startsWith('KUBE-NODEPORT-')))
      .map((j) => `-A ${j.from} ${joinArgs(captureJumpArgs(j))}`);
  return ['*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...lines('nat'), 'COMMIT', '*filter', ':INPUT ACCEPT [0:0]', ...lines('filter'), 'COMMIT', ''].join('\n');
}

export function userspaceSnapshotFromDryRun(text: string, family: IPFamily): UserspaceSnapshot {
  const table = parseProxySocketTable(text);
  return {
    mode: USERSPACE_TRACE_MODE,
    family,
    source: '--dry-run output',
    tables: parseIptablesSave(captureJumpsText() + text),
    sockets: new Map(table.rows.map((r) => [socketKey(r.protocol, r.proxyPort), r])),
    listenIP: table.listenIP,
    endpointsKnown: true,
  };
}

export function isUserspaceSnapshot(snapshot: RuleSnapshot): snapshot is UserspaceSnapshot {
  return snapshot.mode === USERSPACE_TRACE_MODE && (snapshot as UserspaceSnapshot).sockets instanceof Map;
}
