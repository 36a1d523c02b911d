/**
 * The objects of the kube-proxy table as plain data, and their one-line `nft -f` spelling. The text
 * is the one knftables writes (and upstream's fake `nft.Dump()` prints), so a dump of ours and a
 * dump of upstream's can be diffed line by line.
 */
import { nftCommentText } from './nft-limits.js';

/** The nftables family of a table: `ip` for IPv4, `ip6` for IPv6. */
export type NftFamily = 'ip' | 'ip6';

export const TABLE_NAME = 'kube-proxy';
export const TABLE_COMMENT = 'rules for kube-proxy';

export interface BaseChainHook {
  readonly type: 'filter' | 'nat';
  readonly hook: 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';
  readonly priority: number;
}

export interface ChainDecl {
  readonly name: string;
  readonly base?: BaseChainHook;
  readonly comment?: string;
}

export interface SetDecl {
  readonly name: string;
  readonly type: string;
  readonly flags?: readonly string[];
  readonly timeoutSeconds?: number;
  readonly comment?: string;
}

/** A verdict map (`type … : verdict`). */
export interface MapDecl {
  readonly name: string;
  readonly type: string;
  readonly comment?: string;
}

/**
 * An element of a set or map: `key` is the key as nft spells it (`172.30.0.41 . tcp . 80`),
 * `value` the verdict for a map element (`goto service-…`, `drop`), `comment` an optional comment.
 */
export interface ElementSpec {
  readonly key: string;
  readonly value?: string;
  readonly comment?: string;
}

export function familyOf(ipFamily: 'IPv4' | 'IPv6'): NftFamily {
  return ipFamily === 'IPv6' ? 'ip6' : 'ip';
}

/**
 * A comment as nft reads it: quoted, and cut to nft's 128 bytes (nft-limits.ts), so no comment, not
 * even one built from the longest valid names, can fail a transaction. Our comments are fixed
 * strings and Kubernetes names, checked by render-guards.
 */
export function quoted(text: string): string {
  return `"${nftCommentText(text)}"`;
}

export function chainBody(decl: ChainDecl): string {
  if (!decl.base && decl.comment === undefined) return '';
  const parts: string[] = [];
  if (decl.base) parts.push(`type ${decl.base.type} hook ${decl.base.hook} priority ${decl.base.priority} ;`);
  if (decl.comment !== undefined) parts.push(`comment ${quoted(decl.comment)} ;`);
  return ` { ${parts.join(' ')} }`;
}

export function setBody(decl: SetDecl): string {
  const parts = [`type ${decl.type} ;`];
  if (decl.flags && decl.flags.length > 0) parts.push(`flags ${decl.flags.join(',')} ;`);
  if (decl.timeoutSeconds !== undefined) parts.push(`timeout ${decl.timeoutSeconds}s ;`);
  if (decl.comment !== undefined) parts.push(`comment ${quoted(decl.comment)} ;`);
  return ` { ${parts.join(' ')} }`;
}

export function mapBody(decl: MapDecl): string {
  const parts = [`type ${decl.type} ;`];
  if (decl.comment !== undefined) parts.push(`comment ${quoted(decl.comment)} ;`);
  return ` { ${parts.join(' ')} }`;
}

/** `KEY [comment "C"] [: VALUE]`: the inside of an element's braces. */
export function elementBody(element: ElementSpec): string {
  let text = element.key;
  if (element.comment !== undefined) text += ` comment ${quoted(element.comment)}`;
  if (element.value !== undefined) text += ` : ${element.value}`;
  return text;
}

/** A rule with its optional comment, as it follows the chain name. */
export function ruleText(rule: string, comment?: string): string {
  return comment === undefined ? rule : `${rule} comment ${quoted(comment)}`;
}
