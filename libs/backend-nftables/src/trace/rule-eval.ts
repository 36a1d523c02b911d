/*
 * One rule against one packet. A rule is read left to right, piece by piece (as upstream's test tracer
 * does): each match piece either holds (read on) or ends the rule; then come the statements — mark
 * changes, DNAT, masquerade, a verdict, a jump, or a random choice among chains or endpoints. Only the
 * shapes kube-proxy (ours and upstream's, v1.29 on) writes are understood; anything else is reported
 * as not understood rather than guessed at.
 */
import { canonicalIP } from '@kube-proxy/core';
import type { EvalEnv, FlowState } from './flow-state.js';
import { exactIndex, normalKey } from './element-index.js';
import { SELECTOR, selectorMatches, selectorValue } from './rule-values.js';
import type { NftContainer, NftElement } from './nft-ruleset.js';

export type Verdict = 'drop' | 'reject' | 'accept' | 'return';

/** A lookup that decided something: the element the packet hit (for the trace's path). */
export interface ElementHit {
  readonly container: string;
  readonly element: NftElement;
}

export type RuleOutcome =
  | { kind: 'nomatch' }
  | { kind: 'next' }
  | { kind: 'verdict'; verdict: Verdict }
  | { kind: 'jump'; mode: 'jump' | 'goto'; chain: string }
  | { kind: 'dnat'; ip: string; port: number | undefined }
  | { kind: 'chains'; chains: readonly string[] }
  | { kind: 'endpoints'; endpoints: ReadonlyArray<{ ip: string; port: number | undefined }> }
  | { kind: 'unknown'; rest: string };

export interface RuleResult {
  readonly outcome: RuleOutcome;
  readonly hits: readonly ElementHit[];
  /** The rule set the masquerade bit, or ran `masquerade`. */
  readonly marked: boolean;
  readonly masqueraded: boolean;
  /** The rule looked the client up in a session-affinity set (never a hit for a new connection). */
  readonly affinity: boolean;
}

const NOISE = [/ comment "[^"]*"$/, /\bcounter(?: packets \d+ bytes \d+)?/g];

const CONCAT_LOOKUP = new RegExp(String.raw`^(${SELECTOR}(?: \. ${SELECTOR})*) (!= )?(vmap )?(@\S+|\{[^}]*\})`);
const COMPARE = new RegExp(String.raw`^(${SELECTOR}) (!= |== )?("[^"]*"|[^\s{@]+)`);
const FIB = /^fib (saddr|daddr)(?: \. iif)? type (!= )?local\b/;
const CT_STATE = /^ct state (\{[^}]*\}|\S+)/;
const CT_STATUS_DNAT = /^ct status dnat\b/;
const MARK_TEST = /^(?:meta )?mark (?:and|&) (0x[0-9a-f]+|\d+) (==|!=) (0x[0-9a-f]+|\d+)/i;
const MARK_SET = /^(?:meta )?mark set (?:meta )?mark (or|\||xor|\^) (0x[0-9a-f]+|\d+)/i;
const UPDATE = /^(?:update|add) @\S+ \{[^}]*\}/;
const MASQUERADE = /^masquerade(?: (?:fully-random|random|persistent),?)*$/;
const JUMP = /^(jump|goto) (\S+)$/;
const VERDICT = /^(drop|accept|return|reject(?: with .*)?)$/;
const DNAT_ONE = /^dnat (?:ip6? )?to (\[[^\]]+\]|[0-9.]+|[0-9a-fA-F:]+)(?::(\d+))?$/;
const DNAT_MAP = /^dnat (?:ip6? )?(?:addr \. port )?to numgen random mod (\d+) map \{(.*)\}$/;
const NUMGEN_VMAP = /^numgen random mod (\d+) vmap \{(.*)\}$/;

function strip(rule: string): string {
  let text = rule;
  for (const re of NOISE) text = text.replace(re, '');
  return text.replace(/\s+/g, ' ').trim();
}

/** Items of an anonymous set `{ a, b }` / `{ a , b }`. */
function anonymousItems(body: string): string[] {
  return body.replace(/^\{|\}$/g, '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** Items of a concatenated key `a . b . c`. */
function keyParts(key: string): string[] {
  return key.split(' . ').map((s) => s.trim());
}

function elementMatches(selectors: readonly string[], state: FlowState, key: string): boolean {
  const parts = keyParts(key);
  if (parts.length !== selectors.length) return false;
  return selectors.every((sel, i) => selectorMatches(selectorValue(sel, state), state, parts[i]!));
}

function findElement(container: NftContainer, selectors: readonly string[], state: FlowState): NftElement | undefined {
  const index = exactIndex(container);
  if (index !== null) {
    const values = selectors.map((sel) => selectorValue(sel, state));
    // `tcp dport` in a key also pins the protocol; the index knows only values.
    if (values.some((v) => v.value === undefined || (v.proto !== undefined && v.proto !== state.proto))) return undefined;
    const key = normalKey(values.map((v) => String(v.value)));
    return key === undefined ? undefined : index.get(key);
  }
  return container.elements.find((e) => elementMatches(selectors, state, e.key));
}

/** `0 : goto a, 1 : goto b` / `0 : 10.0.0.1 . 80 , 1 : …` → the values, in index order. */
function numgenEntries(body: string, count: number): string[] | undefined {
  const entries = body.split(',').map((e) => e.trim()).filter((e) => e !== '');
  const values: string[] = [];
  for (const entry of entries) {
    const m = /^(\d+) : (.+)$/.exec(entry);
    if (!m) return undefined;
    values[Number(m[1])] = m[2]!.trim();
  }
  return values.length === count && values.every((v) => v !== undefined) ? values : undefined;
}

function hostPort(target: string): { ip: string; port: number | undefined } | undefined {
  const concat = /^(\S+) \. (\d+)$/.exec(target);
  if (concat) return { ip: canonicalIP(concat[1]!) ?? concat[1]!, port: Number(concat[2]) };
  const m = /^(?:\[([^\]]+)\]|([0-9.]+)|([0-9a-fA-F:]+))(?::(\d+))?$/.exec(target);
  if (!m) return undefined;
  const ip = m[1] ?? m[2] ?? m[3]!;
  return { ip: canonicalIP(ip) ?? ip, port: m[4] !== undefined ? Number(m[4]) : undefined };
}

class RuleReader {
  readonly hits: ElementHit[] = [];
  marked = false;
  masqueraded = false;
  affinity = false;

  constructor(
    private readonly env: EvalEnv,
    private readonly state: FlowState,
  ) {}

  result(outcome: RuleOutcome): RuleResult {
    return { outcome, hits: this.hits, marked: this.marked, masqueraded: this.masqueraded, affinity: this.affinity };
  }

  /** Reads `text` from the start; returns the outcome once the rule ends. */
  read(text: string): RuleOutcome {
    let rest = text;
    for (let guard = 0; guard < 64; guard++) {
      if (rest === '') return { kind: 'next' };
      const step = this.piece(rest) ?? this.statement(rest);
      if (step === undefined) return { kind: 'unknown', rest };
      if ('outcome' in step) return step.outcome;
      rest = step.rest.trim();
    }
    return { kind: 'unknown', rest };
  }

  /** A match piece: { rest } when it holds, { outcome: nomatch } when not, undefined when not a match piece. */
  private piece(rest: string): { rest: string } | { outcome: RuleOutcome } | undefined {
    const no = { outcome: { kind: 'nomatch' } as RuleOutcome };
    let m: RegExpExecArray | null;
    if ((m = CT_STATE.exec(rest))) return m[1]!.includes('new') ? { rest: rest.slice(m[0].length) } : no;
    if ((m = CT_STATUS_DNAT.exec(rest))) return this.state.dnatted ? { rest: rest.slice(m[0].length) } : no;
    if ((m = FIB.exec(rest))) {
      const ip = m[1] === 'saddr' ? this.state.saddr : this.state.daddr;
      const local = this.env.nodeIPs.has(canonicalIP(ip) ?? ip);
      return local !== (m[2] !== undefined) ? { rest: rest.slice(m[0].length) } : no;
    }
    if ((m = MARK_TEST.exec(rest))) {
      const masked = this.state.mark & Number(m[1]);
      return (masked === Number(m[3])) === (m[2] === '==') ? { rest: rest.slice(m[0].length) } : no;
    }
    if ((m = CONCAT_LOOKUP.exec(rest))) return this.lookup(m, rest.slice(m[0].length));
    if ((m = COMPARE.exec(rest))) {
      const sel = selectorValue(m[1]!, this.state);
      const holds = selectorMatches(sel, this.state, m[3]!);
      return holds !== (m[2] === '!= ') ? { rest: rest.slice(m[0].length) } : no;
    }
    return undefined;
  }

  private lookup(m: RegExpExecArray, after: string): { rest: string } | { outcome: RuleOutcome } {
    const selectors = m[1]!.split(' . ');
    const negated = m[2] !== undefined;
    const target = m[4]!;
    if (target.startsWith('{')) {
      const hit = anonymousItems(target).some((item) => elementMatches(selectors, this.state, item));
      return hit !== negated ? { rest: after } : { outcome: { kind: 'nomatch' } };
    }
    const container = this.env.ruleset.containers.get(target.slice(1));
    // Session affinity remembers earlier clients; a trace is of a first connection, so it never
    // matches (what the next rule — the random choice — does is what a new client gets).
    if (container?.name.startsWith('affinity-')) {
      this.affinity = true;
      return { outcome: { kind: 'nomatch' } };
    }
    if (!container) return { outcome: { kind: 'unknown', rest: `${m[0]} (no set or map ${target.slice(1)})` } };
    const element = findElement(container, selectors, this.state);
    if (m[3] !== undefined) {
      if (!element || element.value === undefined) return { outcome: { kind: 'nomatch' } };
      this.hits.push({ container: container.name, element });
      return { rest: element.value };
    }
    if (element && !negated && container.kind === 'map') this.hits.push({ container: container.name, element });
    return (element !== undefined) !== negated ? { rest: after } : { outcome: { kind: 'nomatch' } };
  }

  private statement(rest: string): { rest: string } | { outcome: RuleOutcome } | undefined {
    let m: RegExpExecArray | null;
    if ((m = MARK_SET.exec(rest))) {
      const bits = Number(m[2]);
      if (m[1] === 'or' || m[1] === '|') {
        this.state.mark |= bits;
        this.marked = true;
      } else this.state.mark ^= bits;
      return { rest: rest.slice(m[0].length) };
    }
    if ((m = UPDATE.exec(rest))) return { rest: rest.slice(m[0].length) };
    if (MASQUERADE.test(rest)) {
      this.masqueraded = true;
      return { outcome: { kind: 'verdict', verdict: 'accept' } };
    }
    if ((m = JUMP.exec(rest))) return { outcome: { kind: 'jump', mode: m[1] as 'jump' | 'goto', chain: m[2]! } };
    if ((m = VERDICT.exec(rest))) return { outcome: { kind: 'verdict', verdict: m[1]!.split(' ')[0] as Verdict } };
    return this.translation(rest);
  }

  private translation(rest: string): { outcome: RuleOutcome } | undefined {
    let m: RegExpExecArray | null;
    if ((m = DNAT_ONE.exec(rest))) {
      const hp = hostPort(m[2] !== undefined ? `${m[1]}:${m[2]}` : m[1]!);
      return hp ? { outcome: { kind: 'dnat', ...hp } } : undefined;
    }
    if ((m = DNAT_MAP.exec(rest))) {
      const values = numgenEntries(m[2]!, Number(m[1]));
      const endpoints = values?.map(hostPort);
      if (!endpoints || endpoints.some((e) => e === undefined)) return undefined;
      return { outcome: { kind: 'endpoints', endpoints: endpoints as Array<{ ip: string; port: number | undefined }> } };
    }
    if ((m = NUMGEN_VMAP.exec(rest))) {
      const values = numgenEntries(m[2]!, Number(m[1]));
      const chains = values?.map((v) => /^(?:goto|jump) (\S+)$/.exec(v)?.[1]);
      if (!chains || chains.some((c) => c === undefined)) return undefined;
      return { outcome: { kind: 'chains', chains: chains as string[] } };
    }
    return undefined;
  }
}

/** Evaluates `rule` for the packet in `state` (whose mark the rule may change). */
export function evaluateRule(rule: string, state: FlowState, env: EvalEnv): RuleResult {
  const reader = new RuleReader(env, state);
  return reader.result(reader.read(strip(rule)));
}
