import type { CIDR, IPAddress } from '@kube-proxy/core';
import { canonicalIP, parseCIDR, parseIP } from '@kube-proxy/core';
import { tokenize } from '../rule-text.js';

/*
 * One `-A CHAIN …` line of iptables-save (or of an iptables-restore payload), parsed into the matches
 * a packet tracer evaluates. A live node also holds rules of others (docker, CNI plugins, firewalld)
 * with matches this parser does not know: such a rule keeps its raw text and lists what was not
 * understood in `unknown`, and the tracer treats it as not matching, so a foreign rule can never make
 * a packet look as if it went somewhere it does not.
 */

/** An address match (`-s`, `-d`): an address or a CIDR, pre-parsed once for speed. */
export interface AddressMatch {
  readonly kind: 'source' | 'destination';
  readonly negated: boolean;
  readonly text: string;
  readonly cidr?: CIDR;
  readonly ip?: IPAddress;
}

export type PortRange = readonly [number, number];

export type RuleMatch =
  | AddressMatch
  | { readonly kind: 'protocol'; readonly negated: boolean; readonly protocol: string }
  | { readonly kind: 'sport' | 'dport'; readonly negated: boolean; readonly ranges: readonly PortRange[] }
  | { readonly kind: 'in-interface' | 'out-interface'; readonly negated: boolean; readonly name: string }
  | { readonly kind: 'src-type' | 'dst-type'; readonly negated: boolean; readonly types: readonly string[] }
  | { readonly kind: 'statistic'; readonly probability: number }
  /** `-m recent --rcheck/--update` and the like: a check of earlier packets. */
  | { readonly kind: 'history'; readonly negated: boolean; readonly what: string }
  | { readonly kind: 'mark'; readonly negated: boolean; readonly value: number; readonly mask: number }
  | { readonly kind: 'ctstate'; readonly negated: boolean; readonly states: readonly string[] }
  | { readonly kind: 'set'; readonly negated: boolean; readonly set: string; readonly flags: string }
  | { readonly kind: 'physdev'; readonly negated: boolean; readonly what: string };

export interface RuleTarget {
  /** `DNAT`, `KUBE-SVC-…`, `ACCEPT`, … */
  readonly name: string;
  /** `-g` rather than `-j`. */
  readonly goto: boolean;
  /** The target's own options, e.g. `--to-destination` → `10.0.0.1:80`; flags map to ''. */
  readonly options: ReadonlyMap<string, string>;
}

export interface SavedRule {
  readonly table: string;
  readonly chain: string;
  /** The line as iptables-save prints it (`-A CHAIN …`). */
  readonly raw: string;
  /** The `-m comment --comment` text, when there is one. */
  readonly comment?: string;
  readonly matches: readonly RuleMatch[];
  readonly target?: RuleTarget;
  /** Match options this parser does not understand (the rule never matches when non-empty). */
  readonly unknown: readonly string[];
}

/** Options (outside the target) that take no value. */
const FLAG_OPTIONS = new Set([
  '--rcheck',
  '--update',
  '--set',
  '--remove',
  '--rsource',
  '--rdest',
  '--reap',
  '--rttl',
  '--physdev-is-in',
  '--physdev-is-out',
  '--physdev-is-bridged',
  '--limit-iface-in',
  '--limit-iface-out',
]);

/**
 * Options that are understood but do not restrict which packets match (`-m nfacct` only counts; the
 * recent module's `--set` records the source; `--mode` is read with `--probability`/`--every`).
 */
const NEUTRAL_OPTIONS = new Set(['--nfacct-name', '--mode', '--name', '--seconds', '--mask', '--hitcount', '--set', '--rsource', '--rdest', '--reap', '--rttl', '--limit-iface-in', '--limit-iface-out', '--every', '--packet']);

const PROTOCOL_NUMBERS: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '132': 'sctp', '1': 'icmp', '58': 'ipv6-icmp' };

interface ParseState {
  readonly matches: RuleMatch[];
  readonly unknown: string[];
  comment?: string;
  statisticMode?: string;
  nthEvery?: number;
}

/** Parses one `-A CHAIN …` line of table `table`; undefined when the line is not a rule at all. */
export function parseSavedRule(table: string, line: string): SavedRule | undefined {
  const tokens = tokensOf(line);
  if (tokens === undefined) return undefined;
  if (tokens.length < 2 || (tokens[0] !== '-A' && tokens[0] !== '--append')) return undefined;
  const chain = tokens[1] as string;
  const state: ParseState = { matches: [], unknown: [] };
  let target: RuleTarget | undefined;
  let i = 2;
  while (i < tokens.length) {
    const token = tokens[i] as string;
    if (token === '-j' || token === '--jump' || token === '-g' || token === '--goto') {
      target = parseTarget(tokens, i);
      break;
    }
    i = parseOption(tokens, i, state);
  }
  finishStatistic(state);
  return {
    table,
    chain,
    raw: line,
    ...(state.comment !== undefined ? { comment: state.comment } : {}),
    matches: state.matches,
    ...(target ? { target } : {}),
    unknown: state.unknown,
  };
}

/**
 * iptables-restore's tokenizer (rule-text.ts) for the plain lines iptables-save prints (words, and
 * whole double-quoted words without escapes), by index scanning: a 170k-rule save is read several
 * times faster. Anything else (an escape, a quote inside a word) goes to the full tokenizer.
 */
function tokensOf(line: string): string[] | undefined {
  const tokens: string[] = [];
  const n = line.length;
  let i = 0;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c === 32 || c === 9) {
      i++;
    } else if (c === 34) {
      const close = line.indexOf('"', i + 1);
      const after = line.charCodeAt(close + 1);
      if (close < 0 || line.includes('\\', i) || (close + 1 < n && after !== 32 && after !== 9)) return slowTokens(line);
      tokens.push(line.slice(i + 1, close));
      i = close + 1;
    } else {
      let j = i;
      while (j < n && line.charCodeAt(j) !== 32 && line.charCodeAt(j) !== 9) {
        if (line.charCodeAt(j) === 34) return slowTokens(line);
        j++;
      }
      tokens.push(line.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

function slowTokens(line: string): string[] | undefined {
  try {
    return tokenize(line);
  } catch {
    return undefined;
  }
}

function parseTarget(tokens: readonly string[], at: number): RuleTarget | undefined {
  const name = tokens[at + 1];
  if (name === undefined) return undefined;
  const options = new Map<string, string>();
  for (let i = at + 2; i < tokens.length; i++) {
    const option = tokens[i] as string;
    const next = tokens[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      options.set(option, next);
      i++;
    } else {
      options.set(option, '');
    }
  }
  return { name, goto: tokens[at] === '-g' || tokens[at] === '--goto', options };
}

/** Values following an option up to the next option (`-x`, `--x` or `!`). */
function valuesAfter(tokens: readonly string[], at: number): string[] {
  const values: string[] = [];
  for (let i = at + 1; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === '!' || (t.startsWith('-') && t.length > 1 && !/^-\d/.test(t))) break;
    values.push(t);
  }
  return values;
}

/** Parses the option at `at` (with a leading `!`), records it, and returns the index after it. */
function parseOption(tokens: readonly string[], at: number, state: ParseState): number {
  let i = at;
  let negated = false;
  if (tokens[i] === '!') {
    negated = true;
    i++;
  }
  const option = tokens[i];
  if (option === undefined) return i;
  if (option === '-m' || option === '--match') return i + 2;
  if (FLAG_OPTIONS.has(option)) {
    recordFlag(option, negated, state);
    return i + 1;
  }
  const values = valuesAfter(tokens, i);
  // `--comment` text written unquoted (as upstream's fake iptables and its test dumps do) runs on
  // to the next option; every other option takes one value.
  const take = option === '--comment' ? Math.max(values.length, 1) : Math.min(values.length, 1);
  const value = values.slice(0, take).join(' ');
  const firstValue = values[0] ?? '';
  if (option === '--match-set' && values.length >= 2) {
    state.matches.push({ kind: 'set', negated, set: firstValue, flags: values[1] as string });
    return i + 3;
  }
  recordValue(option, negated, value, state);
  return i + 1 + take;
}

function recordFlag(option: string, negated: boolean, state: ParseState): void {
  if (option === '--rcheck' || option === '--update') state.matches.push({ kind: 'history', negated, what: `recent ${option}` });
  else if (option.startsWith('--physdev-')) state.matches.push({ kind: 'physdev', negated, what: option });
  // The rest (--set, --rsource, --limit-iface-in …) do not restrict the match.
}

function recordValue(option: string, negated: boolean, value: string, state: ParseState): void {
  const m = state.matches;
  switch (option) {
    case '-s':
    case '--source':
    case '-d':
    case '--destination':
      m.push(addressMatch(option === '-s' || option === '--source' ? 'source' : 'destination', negated, value));
      return;
    case '-p':
    case '--protocol':
      m.push({ kind: 'protocol', negated, protocol: PROTOCOL_NUMBERS[value] ?? value.toLowerCase() });
      return;
    case '-i':
    case '--in-interface':
    case '-o':
    case '--out-interface':
      m.push({ kind: option === '-i' || option === '--in-interface' ? 'in-interface' : 'out-interface', negated, name: value });
      return;
    case '--comment':
      state.comment = value;
      return;
    default:
      recordModuleValue(option, negated, value, state);
  }
}

function recordModuleValue(option: string, negated: boolean, value: string, state: ParseState): void {
  const m = state.matches;
  switch (option) {
    case '--dport':
    case '--destination-port':
    case '--dports':
    case '--destination-ports':
    case '--sport':
    case '--source-port':
    case '--sports':
    case '--source-ports': {
      const ranges = parsePortRanges(value);
      if (ranges === undefined) state.unknown.push(`${option} ${value}`);
      else m.push({ kind: option.startsWith('--d') ? 'dport' : 'sport', negated, ranges });
      return;
    }
    case '--src-type':
    case '--dst-type':
      m.push({ kind: option === '--src-type' ? 'src-type' : 'dst-type', negated, types: value.toUpperCase().split(',') });
      return;
    case '--probability':
      m.push({ kind: 'statistic', probability: Number(value) });
      return;
    case '--mark':
      pushMark(value, negated, state);
      return;
    case '--ctstate':
    case '--state':
      m.push({ kind: 'ctstate', negated, states: value.toUpperCase().split(',') });
      return;
    case '--physdev-in':
    case '--physdev-out':
      m.push({ kind: 'physdev', negated, what: `${option} ${value}` });
      return;
    default:
      recordNeutralOrUnknown(option, negated, value, state);
  }
}

function recordNeutralOrUnknown(option: string, negated: boolean, value: string, state: ParseState): void {
  if (option === '--mode') state.statisticMode = value;
  if (option === '--every') state.nthEvery = Number(value);
  if (NEUTRAL_OPTIONS.has(option)) return;
  state.unknown.push(`${negated ? '! ' : ''}${option}${value === '' ? '' : ` ${value}`}`);
}

/** `-m statistic --mode nth --every n`: one packet in n takes the branch, as a probability of 1/n. */
function finishStatistic(state: ParseState): void {
  if (state.statisticMode === 'nth' && state.nthEvery !== undefined && state.nthEvery > 0) {
    state.matches.push({ kind: 'statistic', probability: 1 / state.nthEvery });
  }
}

function pushMark(value: string, negated: boolean, state: ParseState): void {
  const [v, mask] = value.split('/');
  const num = Number(v);
  const maskNum = mask === undefined ? 0xffffffff : Number(mask);
  if (Number.isNaN(num) || Number.isNaN(maskNum)) state.unknown.push(`--mark ${value}`);
  else state.matches.push({ kind: 'mark', negated, value: num >>> 0, mask: maskNum >>> 0 });
}

function addressMatch(kind: 'source' | 'destination', negated: boolean, text: string): AddressMatch {
  if (text.includes('/')) {
    const cidr = parseCIDR(text);
    return cidr ? { kind, negated, text, cidr } : { kind, negated, text };
  }
  const ip = parseIP(text);
  return ip ? { kind, negated, text: canonicalIP(text) ?? text, ip } : { kind, negated, text };
}

/** `80`, `80:90`, `80,443,1000:2000` → ranges; undefined when malformed. */
export function parsePortRanges(text: string): PortRange[] | undefined {
  const ranges: PortRange[] = [];
  for (const part of text.split(',')) {
    const [lo, hi] = part.split(':');
    const a = lo === '' ? 0 : Number(lo);
    const b = hi === undefined ? a : hi === '' ? 65535 : Number(hi);
    if (!Number.isInteger(a) || !Number.isInteger(b)) return undefined;
    ranges.push([a, b]);
  }
  return ranges;
}
