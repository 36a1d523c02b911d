/**
 * The proxy's `--dry-run` stdout: after every successful sync a header `# sync <n> <full|partial>
 * <ISO time>[ <family>]` and then the complete would-be iptables state (`*filter`…`COMMIT`,
 * `*nat`…`COMMIT`). SyncOutputParser turns the byte stream into complete blocks, however the pipe
 * splits it; the functions below answer the questions the tests ask of one block.
 */

export interface SyncBlock {
  /** The proxy's sync counter. */
  readonly seq: number;
  readonly kind: 'full' | 'partial';
  /** The time in the header (the proxy's clock, end of the sync). */
  readonly time: string;
  /** Set when the proxy tags blocks per IP family (dual-stack). */
  readonly family?: string;
  /** The state: every line after the header, without it. */
  readonly lines: readonly string[];
  /** When the test process had read the whole block (Date.now()). */
  readonly receivedAt: number;
}

const HEADER = /^# sync (\d+) (full|partial) (\S+)(?: (\S+))?$/;

/** Incremental parser: feed() stdout chunks, complete blocks come out of onBlock. */
export class SyncOutputParser {
  private partialLine = '';
  private current: { header: RegExpExecArray; lines: string[]; tables: number; commits: number } | undefined;
  /** Lines outside any block (there should be none: stdout carries only the dry-run output). */
  readonly stray: string[] = [];

  constructor(
    private readonly onBlock: (b: SyncBlock) => void,
    private readonly now: () => number = Date.now,
  ) {}

  feed(chunk: string): void {
    const text = this.partialLine + chunk;
    const parts = text.split('\n');
    this.partialLine = parts.pop() ?? '';
    for (const line of parts) this.line(line);
  }

  private line(line: string): void {
    const header = HEADER.exec(line);
    if (header) {
      // A header while a block is open: the previous one was cut short (should not happen).
      if (this.current) this.stray.push(`(incomplete block ${this.current.header[0]})`);
      this.current = { header, lines: [], tables: 0, commits: 0 };
      return;
    }
    const cur = this.current;
    if (!cur) {
      if (line !== '') this.stray.push(line);
      return;
    }
    cur.lines.push(line);
    if (line.startsWith('*')) cur.tables++;
    if (line === 'COMMIT') cur.commits++;
    // Complete when every table opened has been committed and both filter and nat are in.
    if (cur.commits === cur.tables && cur.lines.includes('*filter') && cur.lines.includes('*nat')) {
      this.current = undefined;
      const [, seq, kind, time, family] = cur.header;
      this.onBlock({
        seq: Number(seq),
        kind: kind as 'full' | 'partial',
        time: time!,
        ...(family ? { family } : {}),
        lines: cur.lines,
        receivedAt: this.now(),
      });
    }
  }
}

/** The lines of one table (`*nat` … `COMMIT`, exclusive). */
export function tableLines(b: SyncBlock, table: 'filter' | 'nat'): string[] {
  const start = b.lines.indexOf(`*${table}`);
  if (start < 0) return [];
  const end = b.lines.indexOf('COMMIT', start);
  return b.lines.slice(start + 1, end < 0 ? undefined : end);
}

export function chainDeclared(b: SyncBlock, table: 'filter' | 'nat', chain: string): boolean {
  return tableLines(b, table).some((l) => l.startsWith(`:${chain} `));
}

/** Rules appended to `chain`. */
export function chainRules(b: SyncBlock, table: 'filter' | 'nat', chain: string): string[] {
  return tableLines(b, table).filter((l) => l.startsWith(`-A ${chain} `));
}

/** All KUBE-* chain names mentioned anywhere in the nat table (declared or jumped to). */
export function natChainsMatching(b: SyncBlock, prefix: string): string[] {
  const names = new Set<string>();
  const re = new RegExp(`\\b(${prefix}[A-Z0-9]+)\\b`, 'g');
  for (const l of tableLines(b, 'nat')) for (const m of l.matchAll(re)) names.add(m[1]!);
  return [...names].sort();
}

/**
 * The KUBE-SVC chain the cluster-IP rule of `servicePort` ("ns/name:port") jumps to, when it is
 * programmed with endpoints (a service without endpoints gets a REJECT in the filter table instead).
 */
export function serviceChain(b: SyncBlock, servicePort: string): string | undefined {
  const comment = `--comment "${servicePort} cluster IP"`;
  for (const l of chainRules(b, 'nat', 'KUBE-SERVICES')) {
    if (!l.includes(comment)) continue;
    const m = / -j (KUBE-SVC-[A-Z0-9]+)$/.exec(l);
    if (m) return m[1];
  }
  return undefined;
}

export interface SvcTarget {
  /** `ip:port` from the rule comment. */
  readonly endpoint: string;
  /** The statistic-module probability, undefined for the last (unconditional) rule. */
  readonly probability?: number;
  readonly sep: string;
}

/** The endpoint jumps of a KUBE-SVC chain, in order: what load balancing picks from. */
export function serviceTargets(b: SyncBlock, svcChain: string): SvcTarget[] {
  const out: SvcTarget[] = [];
  for (const l of chainRules(b, 'nat', svcChain)) {
    const sep = / -j (KUBE-SEP-[A-Z0-9]+)$/.exec(l);
    if (!sep) continue;
    const ep = / -> ([^"\s]+)"/.exec(l);
    const p = /--probability (\S+)/.exec(l);
    out.push({ endpoint: ep?.[1] ?? '?', sep: sep[1]!, ...(p ? { probability: Number(p[1]) } : {}) });
  }
  return out;
}

/** Endpoints `servicePort` load-balances to in this state, or undefined when it has no KUBE-SVC chain. */
export function serviceEndpoints(b: SyncBlock, servicePort: string): string[] | undefined {
  const chain = serviceChain(b, servicePort);
  return chain === undefined ? undefined : serviceTargets(b, chain).map((t) => t.endpoint);
}

/** Every line that mentions `servicePort` in a comment, in either table. */
export function linesAbout(b: SyncBlock, servicePort: string): string[] {
  return b.lines.filter((l) => l.includes(`${servicePort} `) || l.includes(`${servicePort}"`));
}

/** The state's rule lines for comparing two proxies (the `# sync` header is not part of `lines`). */
export function ruleText(b: SyncBlock): string {
  return b.lines.join('\n');
}

/** A short unified-style diff of two states, for failure messages. */
export function diffStates(a: SyncBlock, b: SyncBlock, labels: [string, string] = ['a', 'b']): string {
  const inA = new Set(a.lines);
  const inB = new Set(b.lines);
  const onlyA = a.lines.filter((l) => !inB.has(l)).map((l) => `- ${l}`);
  const onlyB = b.lines.filter((l) => !inA.has(l)).map((l) => `+ ${l}`);
  if (onlyA.length === 0 && onlyB.length === 0) return '(same lines, different order)';
  return [`--- ${labels[0]}`, `+++ ${labels[1]}`, ...onlyA, ...onlyB].join('\n');
}
