import type { Clock, Logger } from '@kube-proxy/core';
import type { IptablesInterface, Table, TableFlushFinding } from '@kube-proxy/netfilter-iptables';
import { IptablesFlushMonitor } from '@kube-proxy/netfilter-iptables';
import { CANARY_TABLES, KUBE_PROXY_CANARY_CHAIN } from '../render/index.js';

export { IPTABLES_FLUSH_POLL_MS, IPTABLES_FLUSH_SETTLE_MS, IPTABLES_FLUSH_TIMEOUT_MS } from '@kube-proxy/netfilter-iptables';

export interface CanaryMonitorOptions {
  readonly iptables: IptablesInterface;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often to look for the canaries and the expected rules (upstream: syncPeriod). */
  readonly intervalMs: number;
  /** Called after a flush was detected and the canaries were recreated (the proxier forces a full sync). */
  readonly onFlush: (findings: readonly TableFlushFinding[]) => void;
  /** Default: mangle, nat, filter (upstream's order). */
  readonly tables?: readonly Table[];
  readonly chain?: string;
}

/**
 * Detects that someone flushed iptables (firewalld reload, `iptables -F`, …): upstream's
 * utiliptables Monitor. A `KUBE-PROXY-CANARY` chain is kept in mangle, nat and filter; every
 * interval they are looked for, and so are the rules the proxier expects (its jump rules and a
 * sentinel of each always-filled chain, see IptablesFlushMonitor), so that a flush of rules that
 * keeps the chains (`iptables -t nat -F`) is noticed too.
 *
 * Differences from upstream: upstream only polls the first table (mangle), so a flush of nat alone
 * goes unnoticed (kubernetes#133767); and it only looks for chains. Here every table is checked each
 * round: its expected rules once a sync installed them (which also catches a deleted canary), else
 * its canary — one process per table, as before (see IptablesFlushMonitor for the costs).
 */
export function canaryFlushMonitor(options: CanaryMonitorOptions): IptablesFlushMonitor {
  return new IptablesFlushMonitor({
    iptables: options.iptables,
    clock: options.clock,
    logger: options.logger,
    intervalMs: options.intervalMs,
    onFlush: options.onFlush,
    tables: options.tables ?? CANARY_TABLES,
    canaryChain: options.chain ?? KUBE_PROXY_CANARY_CHAIN,
    subject: 'iptables rules',
  });
}
