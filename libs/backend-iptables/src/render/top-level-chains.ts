/**
 * The top-level chains of a render (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-FORWARD, ... in both
 * tables): where their rules go, and, with an AppliedChainMemo, which of them a partial sync
 * writes. See "Where we differ from upstream" (partial syncs) in the backend's README.
 *
 * Without a memo their rules go straight into the payload sections, as upstream. With one, each
 * chain's rules also go into a buffer of their own: on a full sync in addition (the payload stays
 * upstream's), on a partial sync instead, and settleTopLevelChains writes the chain after the
 * service loop only if it differs from what the kernel holds.
 */
import type { AppliedChainMemo } from './applied-chain-memo.js';
import { AppliedChainUpdate, appliedChainKey } from './applied-chain-memo.js';
import { KUBE_CHAINS, makeChainLine } from './constants.js';
import type { LineBuffer, LineSink, RenderBuffers } from './line-buffer.js';
import { TeeSink } from './line-buffer.js';

const SERVICES = KUBE_CHAINS.SERVICES;
const EXTERNAL_SERVICES = KUBE_CHAINS.EXTERNAL_SERVICES;
const NODEPORTS = KUBE_CHAINS.NODEPORTS;
const POSTROUTING = KUBE_CHAINS.POSTROUTING;
const MARK_MASQ = KUBE_CHAINS.MARK_MASQ;
const FORWARD = KUBE_CHAINS.FORWARD;
const PROXY_FIREWALL = KUBE_CHAINS.PROXY_FIREWALL;
const KUBELET_FIREWALL = KUBE_CHAINS.KUBELET_FIREWALL;

type Table = 'filter' | 'nat';

/** A top-level chain rendered with a memo: its own rule buffer, for comparison and commit. */
interface TopChain {
  table: Table;
  chain: string;
  key: string;
  rules: LineBuffer;
}

/** Memo keys of the top-level chains, built once (no string concatenation per render). */
const TOP_CHAIN_KEYS: Record<Table, Record<string, string>> = {
  filter: Object.fromEntries(
    [SERVICES, EXTERNAL_SERVICES, FORWARD, NODEPORTS, PROXY_FIREWALL, KUBELET_FIREWALL].map((c) => [c, appliedChainKey('filter', c)]),
  ),
  nat: Object.fromEntries([SERVICES, NODEPORTS, POSTROUTING, MARK_MASQ].map((c) => [c, appliedChainKey('nat', c)])),
};

/** Where the writers put each top-level chain's rules this render, and the chains to settle after the loop. */
export interface TopLevelChains {
  readonly fServices: LineSink;
  readonly fExternal: LineSink;
  readonly fForward: LineSink;
  readonly fNodePorts: LineSink;
  readonly fProxyFirewall: LineSink;
  readonly fKubeletFirewall: LineSink;
  readonly nServices: LineSink;
  readonly nNodePorts: LineSink;
  readonly nPostrouting: LineSink;
  readonly nMarkMasq: LineSink;
  /** With a memo: every chain present this render, in payload order; empty without. */
  readonly topChains: readonly TopChain[];
}

/** What settleTopLevelChains decided: the elided chains (partial sync) and what to commit to the memo. */
export interface TopLevelOutcome {
  readonly elidedChains: string[];
  readonly elidedFilterRules: number;
  readonly elidedNatRules: number;
  readonly appliedChainUpdate: AppliedChainUpdate | null;
}

/** Per render (not per service): what topSink needs besides the chain itself. */
interface SinkContext {
  readonly buffers: RenderBuffers;
  readonly memo: AppliedChainMemo | null;
  readonly elide: boolean;
  readonly topChains: TopChain[];
}

function topSink(ctx: SinkContext, table: Table, chain: string, rules: LineBuffer, present = true): LineSink {
  if (ctx.memo === null) return rules;
  const key = TOP_CHAIN_KEYS[table][chain];
  const own = ctx.buffers.chainBuffer(key);
  if (present) ctx.topChains.push({ table, chain, key, rules: own });
  return ctx.elide ? own : new TeeSink(rules, own);
}

/**
 * The sinks of this render's top-level chains. `elide` (a partial sync with a memo) sends each
 * chain's rules only to its own buffer; KUBE-KUBELET-FIREWALL counts only when `kubeletFirewall`.
 */
export function openTopLevelChains(buffers: RenderBuffers, memo: AppliedChainMemo | null, elide: boolean, kubeletFirewall: boolean): TopLevelChains {
  const ctx: SinkContext = { buffers, memo, elide, topChains: [] };
  const { filterRules, natRules } = buffers;
  // The calls' order is the payload's order of the chains written after the loop.
  return {
    fServices: topSink(ctx, 'filter', SERVICES, filterRules),
    fExternal: topSink(ctx, 'filter', EXTERNAL_SERVICES, filterRules),
    fForward: topSink(ctx, 'filter', FORWARD, filterRules),
    fNodePorts: topSink(ctx, 'filter', NODEPORTS, filterRules),
    fProxyFirewall: topSink(ctx, 'filter', PROXY_FIREWALL, filterRules),
    fKubeletFirewall: topSink(ctx, 'filter', KUBELET_FIREWALL, filterRules, kubeletFirewall),
    nServices: topSink(ctx, 'nat', SERVICES, natRules),
    nNodePorts: topSink(ctx, 'nat', NODEPORTS, natRules),
    nPostrouting: topSink(ctx, 'nat', POSTROUTING, natRules),
    nMarkMasq: topSink(ctx, 'nat', MARK_MASQ, natRules),
    topChains: ctx.topChains,
  };
}

/** Chain lines of the top-level chains we fill in, written up front unless a partial sync elides (then settleTopLevelChains writes them). */
export function writeTopLevelChainLines(buffers: RenderBuffers): void {
  const { filterChains, natChains } = buffers;
  filterChains.write(makeChainLine(SERVICES));
  filterChains.write(makeChainLine(EXTERNAL_SERVICES));
  filterChains.write(makeChainLine(FORWARD));
  filterChains.write(makeChainLine(NODEPORTS));
  filterChains.write(makeChainLine(PROXY_FIREWALL));
  natChains.write(makeChainLine(SERVICES));
  natChains.write(makeChainLine(NODEPORTS));
  natChains.write(makeChainLine(POSTROUTING));
  natChains.write(makeChainLine(MARK_MASQ));
}

/**
 * After the service loop, with a memo: which top-level chains a partial sync writes (those whose
 * rules differ from what the kernel holds, chain line first so the kernel's copy is flushed) and
 * which it elides, and what to commit to the memo (every chain written, full sync or partial).
 */
export function settleTopLevelChains(memo: AppliedChainMemo | null, elide: boolean, top: TopLevelChains, buffers: RenderBuffers): TopLevelOutcome {
  const elidedChains: string[] = [];
  if (memo === null) return { elidedChains, elidedFilterRules: 0, elidedNatRules: 0, appliedChainUpdate: null };
  let elidedFilterRules = 0;
  let elidedNatRules = 0;
  const written: Array<readonly [string, LineBuffer]> = [];
  for (const t of top.topChains) {
    if (!elide) {
      written.push([t.key, t.rules]);
    } else if (memo.matches(t.key, t.rules)) {
      elidedChains.push(t.key);
      if (t.table === 'filter') elidedFilterRules += t.rules.lines;
      else elidedNatRules += t.rules.lines;
    } else {
      if (t.table === 'filter') {
        buffers.filterChains.write(makeChainLine(t.chain));
        buffers.filterRules.writeFrom(t.rules);
      } else {
        buffers.natTopChains.write(makeChainLine(t.chain));
        buffers.natTopRules.writeFrom(t.rules);
      }
      written.push([t.key, t.rules]);
    }
  }
  const appliedChainUpdate = new AppliedChainUpdate(memo, memo.epoch, buffers, buffers.generation, written);
  return { elidedChains, elidedFilterRules, elidedNatRules, appliedChainUpdate };
}
