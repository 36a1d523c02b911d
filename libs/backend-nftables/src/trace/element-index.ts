/*
 * Exact-key lookups into big sets and maps (service-ips holds an element per Service port: 10,000
 * Services mean tens of thousands of elements). A container whose keys are all exact values gets a
 * hash index, built once per snapshot; one with ranges or prefixes is scanned element by element.
 */
import { canonicalIP } from '@kube-proxy/core';
import type { NftContainer, NftElement } from './nft-ruleset.js';

const PROTO_NUMBERS: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '132': 'sctp' };

/** One part of a key in the spelling the index uses; undefined for a range or prefix. */
function normalPart(part: string): string | undefined {
  if (part.includes('/') || /^\S+-\S+$/.test(part) || part.endsWith('*')) return undefined;
  if (/^\d+$/.test(part)) return String(Number(part));
  const ip = canonicalIP(part);
  if (ip !== undefined) return ip;
  return PROTO_NUMBERS[part] ?? part.replace(/^"|"$/g, '');
}

export function normalKey(parts: readonly string[]): string | undefined {
  const out: string[] = [];
  for (const p of parts) {
    const n = normalPart(p.trim());
    if (n === undefined) return undefined;
    out.push(n);
  }
  return out.join(' . ');
}

const indexes = new WeakMap<NftContainer, Map<string, NftElement> | null>();

/** The container's exact-key index, or null when some key is a range or prefix (scan it instead). */
export function exactIndex(container: NftContainer): Map<string, NftElement> | null {
  let index = indexes.get(container);
  if (index !== undefined) return index;
  index = new Map();
  for (const e of container.elements) {
    const k = normalKey(e.key.split(' . '));
    if (k === undefined) {
      index = null;
      break;
    }
    if (!index.has(k)) index.set(k, e);
  }
  indexes.set(container, index);
  return index;
}
