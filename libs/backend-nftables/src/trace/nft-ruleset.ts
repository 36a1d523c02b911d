/*
 * The kube-proxy table as the tracer reads it: chains (with their hook and priority when they are base
 * chains) holding rule texts, and sets and maps holding elements. Both sources the tracer reads — the
 * `nft -f` script our --dry-run (and upstream's fake nft.Dump()) prints, and `nft list table` output —
 * become this one shape, so the tracer never cares which one it was given.
 */
import type { IPFamily, RuleSnapshot } from '@kube-proxy/core';
import type { NftFamily } from '../nft/nft-objects.js';

export type NftHook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';

export interface NftBaseChain {
  readonly type: string;
  readonly hook: NftHook;
  readonly priority: number;
}

export interface NftChain {
  readonly name: string;
  readonly base?: NftBaseChain;
  /** Rule texts in order, as the source spells them (comments and counters included). */
  readonly rules: readonly string[];
}

export interface NftElement {
  /** The key as printed: `10.96.0.10 . tcp . 80`, `10.0.0.0/8`, `tcp . 30080`. */
  readonly key: string;
  /** A map element's value (`goto service-…`, `drop`), undefined in a set. */
  readonly value?: string;
  readonly comment?: string;
}

export interface NftContainer {
  readonly name: string;
  readonly kind: 'set' | 'map';
  readonly elements: readonly NftElement[];
}

export interface NftRuleset {
  readonly family: NftFamily;
  readonly chains: ReadonlyMap<string, NftChain>;
  readonly containers: ReadonlyMap<string, NftContainer>;
}

/** The nftables tracer's RuleSnapshot: opaque to callers, the parsed table inside. */
export interface NftSnapshot extends RuleSnapshot {
  readonly mode: 'nftables';
  readonly ruleset: NftRuleset;
}

export function isNftSnapshot(snapshot: RuleSnapshot): snapshot is NftSnapshot {
  return snapshot.mode === 'nftables' && (snapshot as NftSnapshot).ruleset !== undefined;
}

export function nftFamilyOf(family: IPFamily): NftFamily {
  return family === 'IPv6' ? 'ip6' : 'ip';
}

const HOOKS: ReadonlySet<string> = new Set(['prerouting', 'input', 'forward', 'output', 'postrouting']);

export function isHook(text: string): text is NftHook {
  return HOOKS.has(text);
}

/** nft's named priorities (as `nft list` prints them for the ip and ip6 families). */
const NAMED_PRIORITIES: Readonly<Record<string, number>> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};

/** `-110`, `dstnat`, `dstnat - 10`, `filter + 5`: the number; undefined when unreadable. */
export function parsePriority(text: string): number | undefined {
  const m = /^\s*(-?\d+|[a-z]+)\s*(?:([+-])\s*(\d+))?\s*$/.exec(text);
  if (!m) return undefined;
  const base = /^-?\d+$/.test(m[1]!) ? Number(m[1]) : NAMED_PRIORITIES[m[1]!];
  if (base === undefined) return undefined;
  if (m[2] === undefined) return base;
  return m[2] === '+' ? base + Number(m[3]) : base - Number(m[3]);
}
