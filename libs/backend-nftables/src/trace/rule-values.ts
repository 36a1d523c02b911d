/*
 * Comparing what a packet carries with what a rule or a set element names: addresses (literal, CIDR
 * or range, any spelling), protocols (by name or number), ports (single or range), interface names.
 */
import { canonicalIP, cidrContains } from '@kube-proxy/core';
import type { FlowState } from './flow-state.js';

const PROTO_NUMBERS: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '132': 'sctp' };

/** The selectors the tracer reads a value of, in a comparison or a concatenated lookup key. */
export const SELECTOR = String.raw`(?:ip6? [sd]addr|meta l4proto|th dport|(?:tcp|udp|sctp) dport|th sport|(?:tcp|udp|sctp) sport|iifname|meta iifname)`;

export type SelectorKind = 'addr' | 'proto' | 'port' | 'name';

export interface SelectorValue {
  readonly kind: SelectorKind;
  /** Undefined when the packet has no such field (no input interface, say): nothing matches. */
  readonly value: string | number | undefined;
  /** `tcp dport` also requires the protocol. */
  readonly proto?: string;
}

export function selectorValue(selector: string, state: FlowState): SelectorValue {
  const [a, b] = selector.split(' ');
  if (b === 'saddr') return { kind: 'addr', value: state.saddr };
  if (b === 'daddr') return { kind: 'addr', value: state.daddr };
  if (a === 'meta' && b === 'l4proto') return { kind: 'proto', value: state.proto };
  if (selector.endsWith('iifname')) return { kind: 'name', value: state.iif };
  const port = b === 'sport' ? state.sport : state.dport;
  return a === 'th' ? { kind: 'port', value: port } : { kind: 'port', value: port, proto: a! };
}

/** An address against a literal address, a CIDR or a range `a-b`. */
export function addressMatches(ip: string, ruleAddress: string): boolean {
  if (ruleAddress.includes('/')) return cidrContains(ruleAddress, ip);
  const dash = ruleAddress.indexOf('-');
  if (dash > 0) return inAddressRange(ip, ruleAddress.slice(0, dash), ruleAddress.slice(dash + 1));
  const a = canonicalIP(ip);
  const b = canonicalIP(ruleAddress);
  return a !== undefined && a === b;
}

function addressBigInt(ip: string): bigint | undefined {
  const c = canonicalIP(ip);
  if (c === undefined) return undefined;
  if (!c.includes(':')) return c.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
  const [head, tail] = c.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function inAddressRange(ip: string, low: string, high: string): boolean {
  const v = addressBigInt(ip);
  const l = addressBigInt(low);
  const h = addressBigInt(high);
  return v !== undefined && l !== undefined && h !== undefined && l <= v && v <= h;
}

/** One value of a selector against one item of a rule or element (`tcp`, `80`, `80-90`, `"eth0"`, `eth*`). */
export function valueMatches(selector: SelectorValue, item: string): boolean {
  const { kind, value } = selector;
  if (value === undefined) return false;
  switch (kind) {
    case 'addr':
      return addressMatches(String(value), item);
    case 'proto':
      return (PROTO_NUMBERS[item] ?? item) === value;
    case 'port': {
      const range = /^(\d+)-(\d+)$/.exec(item);
      if (range) return Number(range[1]) <= Number(value) && Number(value) <= Number(range[2]);
      return Number(item) === value;
    }
    case 'name': {
      const name = item.replace(/^"|"$/g, '');
      return name.endsWith('*') ? String(value).startsWith(name.slice(0, -1)) : name === value;
    }
  }
}

/** A whole selector test: the protocol a `tcp dport` implies, then the value. */
export function selectorMatches(selector: SelectorValue, state: FlowState, item: string): boolean {
  if (selector.proto !== undefined && selector.proto !== state.proto) return false;
  return valueMatches(selector, item);
}
