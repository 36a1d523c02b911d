/**
 * What a kube-proxy table already in the kernel holds, as far as a starting proxier needs to know
 * to take it over without a gap (see TableSync.adopt): its chains (with the hooks of base chains),
 * its sets, the elements of the shared sets and maps, and each chain's rules.
 */
export interface KernelChain {
  readonly name: string;
  readonly base?: { readonly type: string; readonly hook: string; readonly priority: number };
}

export interface KernelTableState {
  readonly chains: readonly KernelChain[];
  /** Set name → timeout in seconds (0 when none), named sets only. */
  readonly sets: ReadonlyMap<string, number>;
  /** container → key → element body as TableSync writes it (`KEY [comment "C"] [: VERDICT]`). */
  readonly elements: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /**
   * chain → its rules as nft prints them (or as written, from the in-memory table): a restart keeps
   * every chain whose rules already spell what it would write (rule-canonical.ts). Absent: unknown,
   * so every chain is rewritten.
   */
  readonly rules?: ReadonlyMap<string, readonly string[]>;
}

type Json = unknown;

function obj(v: Json): Record<string, Json> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Json>) : null;
}

/** An nft JSON expression as our element text: a value, or a concatenation joined by " . ". */
function exprText(v: Json): string | null {
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  const o = obj(v);
  if (o && Array.isArray(o['concat'])) {
    const parts = (o['concat'] as Json[]).map(exprText);
    return parts.every((p) => p !== null) ? parts.join(' . ') : null;
  }
  return null;
}

/** `{"goto": {"target": "x"}}` → `goto x`, `{"drop": null}` → `drop`. */
function verdictText(v: Json): string | null {
  const o = obj(v);
  if (!o) return null;
  for (const verb of ['goto', 'jump']) {
    const t = obj(o[verb]);
    if (t && typeof t['target'] === 'string') return `${verb} ${t['target']}`;
  }
  for (const verb of ['drop', 'accept', 'return', 'continue']) if (verb in o) return verb;
  return null;
}

/** One element of `nft -j list set|map` as [key, body]; null for a shape we do not write. */
export function elementFromJson(raw: Json, isMap: boolean): [string, string] | null {
  let keyPart: Json = raw;
  let value: string | undefined;
  if (isMap) {
    if (!Array.isArray(raw) || raw.length !== 2) return null;
    keyPart = raw[0];
    const v = verdictText(raw[1]);
    if (v === null) return null;
    value = v;
  }
  let comment: string | undefined;
  const wrapped = obj(keyPart);
  if (wrapped && obj(wrapped['elem'])) {
    const elem = obj(wrapped['elem'])!;
    keyPart = elem['val'];
    if (typeof elem['comment'] === 'string') comment = elem['comment'];
  }
  const key = exprText(keyPart);
  if (key === null) return null;
  let body = key;
  if (comment !== undefined) body += ` comment "${comment}"`;
  if (value !== undefined) body += ` : ${value}`;
  return [key, body];
}

/** The objects of `nft -j list …` output that belong to `table` of `family`. */
export function jsonObjects(text: string, kind: 'chain' | 'set' | 'map', family: string, table: string): Array<Record<string, Json>> {
  const doc = obj(JSON.parse(text) as Json);
  const list = doc && Array.isArray(doc['nftables']) ? (doc['nftables'] as Json[]) : [];
  const out: Array<Record<string, Json>> = [];
  for (const item of list) {
    const o = obj(obj(item)?.[kind] ?? null);
    if (o && o['family'] === family && o['table'] === table) out.push(o);
  }
  return out;
}

/** key → body of one set or map listed with `nft -j list set|map`. */
export function elementsFromJson(text: string, kind: 'set' | 'map', family: string, table: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of jsonObjects(text, kind, family, table)) {
    const elems = Array.isArray(c['elem']) ? (c['elem'] as Json[]) : [];
    for (const e of elems) {
      const parsed = elementFromJson(e, kind === 'map');
      if (parsed) out.set(parsed[0], parsed[1]);
    }
  }
  return out;
}
