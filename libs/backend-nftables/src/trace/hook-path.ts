/*
 * The base chains a packet meets, by hook and priority — never by chain name, so every layout of the
 * table (ours, upstream's v1.29 to v1.37) is traced the same way:
 *   from elsewhere:   prerouting → input (headed to one of the node's addresses after DNAT)
 *                                 or forward → postrouting
 *   locally generated: output → postrouting (→ input when headed to the node itself)
 * Within a hook, chains run in priority order and each sees the packet as the earlier ones left it
 * (so a chain after the nat one sees the DNATed destination, as in the kernel).
 */
import { canonicalIP } from '@kube-proxy/core';
import { ChainWalker, type Branch } from './chain-walker.js';
import type { EvalEnv } from './flow-state.js';
import type { NftChain, NftHook } from './nft-ruleset.js';

const baseChains = new WeakMap<EvalEnv['ruleset'], Map<NftHook, NftChain[]>>();

/** The base chains of `hook` in priority order (found once per snapshot: a big table has 60,000 chains). */
export function baseChainsOf(env: EvalEnv, hook: NftHook): NftChain[] {
  let byHook = baseChains.get(env.ruleset);
  if (!byHook) {
    byHook = new Map();
    for (const c of env.ruleset.chains.values()) {
      if (c.base === undefined) continue;
      byHook.set(c.base.hook, [...(byHook.get(c.base.hook) ?? []), c]);
    }
    for (const list of byHook.values()) list.sort((a, b) => a.base!.priority - b.base!.priority);
    baseChains.set(env.ruleset, byHook);
  }
  return byHook.get(hook) ?? [];
}

export interface WalkedBranch {
  readonly branch: Branch;
  /** The packet went through postrouting (where masquerading happens). */
  readonly postrouted: boolean;
}

/** Runs every live branch through every base chain of `hook`; dropped branches stay as they are. */
function runHook(env: EvalEnv, walker: ChainWalker, hook: NftHook, branches: Branch[]): Branch[] {
  let live = branches;
  for (const chain of baseChainsOf(env, hook)) {
    const next: Branch[] = [];
    for (const b of live) {
      if (b.verdict !== undefined) next.push(b);
      else next.push(...walker.run(chain.name, b).map((w) => w.branch));
    }
    live = next;
  }
  return live;
}

function isLocal(env: EvalEnv, ip: string): boolean {
  return env.nodeIPs.has(canonicalIP(ip) ?? ip);
}

export function walkHooks(env: EvalEnv, start: Branch, locallyGenerated: boolean): WalkedBranch[] {
  const walker = new ChainWalker(env);
  const first = runHook(env, walker, locallyGenerated ? 'output' : 'prerouting', [start]);
  const out: WalkedBranch[] = [];
  for (const b of first) {
    if (b.verdict !== undefined) {
      out.push({ branch: b, postrouted: false });
      continue;
    }
    const local = isLocal(env, b.state.daddr);
    if (locallyGenerated) {
      const post = runHook(env, walker, 'postrouting', [b]);
      const done = local ? post.flatMap((p) => (p.verdict === undefined ? runHook(env, walker, 'input', [p]) : [p])) : post;
      out.push(...done.map((branch) => ({ branch, postrouted: true })));
    } else if (local) {
      out.push(...runHook(env, walker, 'input', [b]).map((branch) => ({ branch, postrouted: false })));
    } else {
      const fwd = runHook(env, walker, 'forward', [b]);
      out.push(...fwd.flatMap((f) => (f.verdict === undefined ? runHook(env, walker, 'postrouting', [f]) : [f])).map((branch) => ({ branch, postrouted: branch.verdict === undefined })));
    }
  }
  return out;
}
