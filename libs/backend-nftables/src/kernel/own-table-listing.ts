import { TABLE_NAME, type NftFamily } from '../nft/nft-objects.js';
import { SET } from '../render/table-names.js';

/*
 * The only listings this backend asks nft for, each naming our own table (kubernetes #136786,
 * fixed upstream by knftables PR #37 / kubernetes PR #137501: never make nft look at other
 * programs' tables, whose contents a newer nft may have written in a form an older nft crashes
 * on). nft 1.0.6 fetches other tables' objects for `list chains ip`, `list sets ip` and even
 * `list sets table ip kube-proxy`. `list table ip kube-proxy` still fetches other tables' chains
 * (not their sets or rules: where the crash was) and `list set|map ip kube-proxy NAME` nothing
 * else at all, as strace shows. `-t` (terse) leaves set contents out.
 */

/**
 * Chains with their rules, named sets and maps of our table, without set contents, as text: the
 * rules in nft's own language (rule-canonical.ts compares them), and cheaper to produce and read
 * than the JSON listing (measured at 10,000 services in the README).
 */
export function ourTableArgs(family: NftFamily): string[] {
  return ['-t', 'list', 'table', family, TABLE_NAME];
}

/** Our `cluster-ips` set without its elements: the cheap "is our table there" probe. */
export function ourSetArgs(family: NftFamily): string[] {
  return ['-j', '-t', 'list', 'set', family, TABLE_NAME, SET.clusterIPs];
}

/** One set or map of our table with its elements. */
export function ourElementsArgs(family: NftFamily, kind: 'set' | 'map', name: string): string[] {
  return ['-j', 'list', kind, family, TABLE_NAME, name];
}
