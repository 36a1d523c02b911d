/* The rule pieces the packet tracer understands: exactly the shapes render/*.ts writes, each a
 * regular expression anchored at the start of what is left of a rule. A rule is read left to right,
 * piece by piece; a piece that does not match the packet ends the rule, and a rule with a piece no
 * matcher knows is an error, so a new rule shape is never silently ignored by the flow tests. */
import { canonicalIP, cidrContains } from '@kube-proxy/core';

export interface TracedPacket {
  readonly sourceIP: string;
  /** Lower case, as nft spells it: tcp, udp, sctp. */
  readonly protocol: string;
  readonly destIP: string;
  readonly destPort: number;
}

/** What the tracer can look up while reading a rule. */
export interface MatchEnv {
  readonly packet: TracedPacket;
  readonly nodeIPs: ReadonlySet<string>;
  /** Keys of a set or map; throws when there is none of that name. */
  keysOf(container: string): readonly string[];
  /** The value (verdict) of a map element, or undefined when the key is not in the map. */
  valueOf(map: string, key: string): string | undefined;
}

/** A piece of a rule: matched (rest continues), not matched (rule ends), or rewritten (a vmap verdict). */
export type PieceResult = { kind: 'match' } | { kind: 'nomatch' } | { kind: 'verdict'; text: string };

export interface Matcher {
  readonly name: string;
  readonly re: RegExp;
  readonly test: (m: RegExpMatchArray, env: MatchEnv) => PieceResult;
}

const MATCH: PieceResult = { kind: 'match' };
const NOMATCH: PieceResult = { kind: 'nomatch' };
const when = (ok: boolean): PieceResult => (ok ? MATCH : NOMATCH);

/** An address against a literal address or a CIDR, in any spelling nft accepts. */
export function addressMatches(ip: string, ruleAddress: string): boolean {
  if (ruleAddress.includes('/')) return cidrContains(ruleAddress, ip);
  const a = canonicalIP(ip);
  const b = canonicalIP(ruleAddress);
  if (a === undefined || b === undefined) throw new Error(`not an address: ${a === undefined ? ip : ruleAddress}`);
  return a === b;
}

function inAnonymousSet(ip: string, list: string): boolean {
  const items = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new Error(`empty anonymous set { ${list} }`);
  return items.some((item) => addressMatches(ip, item));
}

function addrOf(which: string, env: MatchEnv): string {
  return which === 'saddr' ? env.packet.sourceIP : env.packet.destIP;
}

function inSet(env: MatchEnv, set: string, ip: string): boolean {
  return env.keysOf(set).some((k) => addressMatches(ip, k));
}

function tupleKey(env: MatchEnv, withAddress: boolean): string {
  const { destIP, protocol, destPort } = env.packet;
  const proto = `${protocol} . ${destPort}`;
  if (!withAddress) return proto;
  return `${canonicalIP(destIP) ?? destIP} . ${proto}`;
}

/** A vmap lookup: the key as the table spells it (addresses compared canonically). */
function lookup(env: MatchEnv, map: string, withAddress: boolean): PieceResult {
  const want = tupleKey(env, withAddress);
  for (const key of env.keysOf(map)) {
    const parts = key.split(' . ');
    const canonical = withAddress ? `${canonicalIP(parts[0]) ?? parts[0]} . ${parts.slice(1).join(' . ')}` : key;
    if (canonical === want) return { kind: 'verdict', text: env.valueOf(map, key)! };
  }
  return NOMATCH;
}

/** Order matters where one pattern is a prefix of another (a tuple dispatch before a plain `daddr`). */
export const MATCHERS: readonly Matcher[] = [
  // Flow tests only ever trace the first packet of a connection.
  { name: 'ct state new', re: /^ct state new\b/, test: () => MATCH },
  {
    name: 'tuple vmap',
    re: /^ip6? daddr \. meta l4proto \. th dport vmap @(\S+)$/,
    test: (m, env) => lookup(env, m[1], true),
  },
  {
    name: 'port vmap',
    re: /^meta l4proto \. th dport vmap @(\S+)$/,
    test: (m, env) => lookup(env, m[1], false),
  },
  {
    name: 'address in named set',
    re: /^ip6? (saddr|daddr) @(\S+)/,
    test: (m, env) => when(inSet(env, m[2], addrOf(m[1], env))),
  },
  {
    name: 'address in anonymous set',
    re: /^ip6? (saddr|daddr) (!= )?\{([^}]*)\}/,
    test: (m, env) => when(inAnonymousSet(addrOf(m[1], env), m[3]) !== (m[2] !== undefined)),
  },
  {
    name: 'address literal or CIDR',
    re: /^ip6? (saddr|daddr) (!= )?([0-9a-fA-F.:]+(?:\/\d+)?)(?=\s|$)/,
    test: (m, env) => when(addressMatches(addrOf(m[1], env), m[3]) !== (m[2] !== undefined)),
  },
  {
    name: 'fib local',
    re: /^fib (saddr|daddr) type local\b/,
    test: (m, env) => when(env.nodeIPs.has(canonicalIP(addrOf(m[1], env)) ?? '')),
  },
  // Session affinity records the client; a first packet finds every affinity set empty anyway.
  { name: 'affinity update', re: /^update @\S+ \{ ip6? saddr \}/, test: () => MATCH },
];

/** The statements that end a piece-by-piece read: they must be the whole of what is left. */
export const JUMP_RE = /^(jump|goto) (\S+)$/;
export const VERDICT_RE = /^(drop|reject)$/;
export const RETURN_RE = /^return$/;
export const DNAT_RE = /^meta l4proto (tcp|udp|sctp) dnat to (\S+)$/;
/** `meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80 , 1 : … }` (no endpoint chains). */
export const DNAT_MAP_RE = /^meta l4proto (tcp|udp|sctp) dnat (ip6?) addr \. port to numgen random mod (\d+) map \{ (.*) \}$/;
export const DNAT_MAP_ENTRY_RE = /^(\d+) : ([0-9a-fA-F.:]+) \. (\d+)$/;
/** The inline masquerade request (upstream v1.36+ has no mark-for-masquerade chain). */
export const MARK_RE = /^mark set mark or (0x[0-9a-fA-F]+)$/;
export const NUMGEN_RE = /^numgen random mod (\d+) vmap \{ (.*) \}$/;
export const NUMGEN_ENTRY_RE = /^(\d+) : goto (\S+)$/;
export const COMMENT_RE = / comment "[^"]*"$/;
