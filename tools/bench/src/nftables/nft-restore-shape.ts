/**
 * Writes iptables-restore payloads of different shapes to files, so the cost of
 * `iptables-nft-restore` can be taken apart with `timeout`, `time`, `perf` and `strace` outside node
 * (issue 12, item 4). Every file starts from the payload the real renderer produces for N ClusterIP
 * services × 5 endpoints (the same cluster and options as iptables-sync.bench.ts), and each variant
 * removes or moves one ingredient:
 *
 *   full             the rendered payload, unchanged
 *   nocomment        every `-m comment --comment …` removed
 *   noprob           every `-m statistic --mode random --probability …` removed
 *   bare             both removed
 *   chainsonly       every chain declared, only the rules of the top-level chains kept
 *   fewchains        every rule kept, but written into 16 chains and with no jumps to per-service chains
 *   nojumps          every chain and rule kept, jumps to per-service chains replaced by RETURN
 *   dashn            per-service chains created with `-N CHAIN` instead of `:CHAIN - [0:0]`
 *   listfirst        `-S` as the first command of each table (see below)
 *   zerofirst        `-Z` as the first command of each table (see below)
 *   batch-K-NNN      the cold start split in restores of K services each (chains and their rules), the
 *                    top-level chains and every KUBE-SERVICES jump in a last file, to be applied in order
 *                    with --noflush. Until the last file no packet reaches a per-service chain.
 *   zbatch-K-NNN     the same batches with `-Z` first in each table
 *   partial          one service's chains replaced (its first endpoint moved), the --noflush update a
 *                    running node makes; applies on top of `full` or of the batches.
 *
 * Why listfirst/zerofirst: with --noflush, iptables-nft 1.8.9 records the chain and jump target of every
 * command in a sorted linked list (nft-cache.c, cache_chain_list_insert) so it can fetch just those
 * chains; a command that names no chain switches that list off for the rest of the table
 * (`all_chains`). Without --noflush the implicit table flush is such a command, which is why flush
 * mode does not show the quadratic cost.
 *
 * Usage: node tools/bench/dist/nftables/nft-restore-shape.js --sizes=500,1000 --out=/tmp/nft-shape
 *                                                    [--batches=500,1000] [--variants=full,bare,…]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppliedChainMemo, ChainNameCache, renderRuleset } from '@kube-proxy/backend-iptables/internal';
import { scaleCluster, sliceOf } from '../common/scale-cluster.js';
import { BENCH_RENDER_OPTIONS } from '../common/bench-render-options.js';
import { loadedState } from '../common/bench-state.js';

const ENDPOINTS_PER_SERVICE = 5;
const FEW_CHAINS = 16;
/** Chains a service's own rules live in; every other chain is top-level and shared. */
const PER_SERVICE = /^KUBE-(SVC|SEP|EXT|FW|SVL|XLB)-/;

const OPTIONS = BENCH_RENDER_OPTIONS;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

/** One `*table … COMMIT` block, split into what the variants rearrange. */
interface Table {
  readonly name: string;
  readonly declared: string[];
  /** Rules in payload order, with the chain they are appended to. */
  readonly rules: Array<{ chain: string; line: string }>;
}

function parsePayload(text: string): Table[] {
  const tables: Table[] = [];
  let cur: Table | undefined;
  for (const line of text.split('\n')) {
    const word = (i: number) => line.split(' ')[i] ?? '';
    if (line.startsWith('*')) tables.push((cur = { name: line.slice(1), declared: [], rules: [] }));
    else if (!cur) continue;
    else if (line.startsWith(':')) cur.declared.push(word(0).slice(1));
    else if (line.startsWith('-A ')) cur.rules.push({ chain: word(1), line });
  }
  return tables;
}

function write(tables: Table[], decl: (t: Table, chain: string) => string = (_t, c) => `:${c} - [0:0]`): string {
  const out: string[] = [];
  for (const t of tables) {
    out.push(`*${t.name}`);
    for (const c of t.declared) out.push(decl(t, c));
    for (const r of t.rules) out.push(r.line);
    out.push('COMMIT');
  }
  return out.join('\n') + '\n';
}

const mapRules = (tables: Table[], f: (line: string) => string): Table[] =>
  tables.map((t) => ({ ...t, rules: t.rules.map((r) => ({ chain: r.chain, line: f(r.line) })) }));

const stripComment = (l: string) => l.replace(/ -m comment --comment ("[^"]*"|\S+)/, '');
const stripProbability = (l: string) => l.replace(/ -m statistic --mode random --probability \S+/, '');
const jumpTarget = (l: string) => / -j (\S+)/.exec(l)?.[1];

function variants(text: string): Map<string, string> {
  const tables = parsePayload(text);
  const out = new Map<string, string>();
  out.set('full', text);
  out.set('nocomment', write(mapRules(tables, stripComment)));
  out.set('noprob', write(mapRules(tables, stripProbability)));
  out.set('bare', write(mapRules(tables, (l) => stripProbability(stripComment(l)))));
  out.set('chainsonly', write(tables.map((t) => ({ ...t, rules: t.rules.filter((r) => !PER_SERVICE.test(r.chain) && !PER_SERVICE.test(jumpTarget(r.line) ?? '')) }))));
  // Same rules, same matches, but the chain count and the jump graph collapse: what is left is the rule count.
  out.set(
    'fewchains',
    write(
      tables.map((t) => {
        const buckets = new Map<string, string>();
        const bucket = (c: string) => {
          const hit = buckets.get(c) ?? `KUBE-BULK-${buckets.size % FEW_CHAINS}`;
          buckets.set(c, hit);
          return hit;
        };
        const rules = t.rules.map((r) => {
          const chain = PER_SERVICE.test(r.chain) ? bucket(r.chain) : r.chain;
          let line = r.line.replace(`-A ${r.chain} `, `-A ${chain} `);
          if (PER_SERVICE.test(jumpTarget(line) ?? '')) line = line.replace(/ -j \S+$/, ' -j RETURN');
          return { chain, line };
        });
        const kept = t.declared.filter((c) => !PER_SERVICE.test(c));
        const bulk = t.name === 'nat' ? Array.from({ length: Math.min(FEW_CHAINS, buckets.size) }, (_, i) => `KUBE-BULK-${i}`) : [];
        return { ...t, declared: [...kept, ...bulk], rules };
      }),
    ),
  );
  out.set('nojumps', write(mapRules(tables, (l) => (PER_SERVICE.test(jumpTarget(l) ?? '') ? l.replace(/ -j \S+$/, ' -j RETURN') : l))));
  out.set('dashn', dashN(tables));
  out.set('listfirst', text.replace(/^\*(nat|filter)$/gm, '$&\n-S'));
  out.set('zerofirst', text.replace(/^\*(nat|filter)$/gm, '$&\n-Z'));
  return out;
}

/** Top-level chains in the header, per-service chains created by `-N` before the first rule. */
function dashN(tables: Table[]): string {
  const out: string[] = [];
  for (const t of tables) {
    out.push(`*${t.name}`);
    for (const c of t.declared) if (!PER_SERVICE.test(c)) out.push(`:${c} - [0:0]`);
    for (const c of t.declared) if (PER_SERVICE.test(c)) out.push(`-N ${c}`);
    for (const r of t.rules) out.push(r.line);
    out.push('COMMIT');
  }
  return out.join('\n') + '\n';
}

/**
 * The cold start as ordered --noflush restores of K services each. A service is the KUBE-SERVICES
 * rule that jumps into it plus every per-service chain reachable from there. The first file also
 * declares the top-level nat chains (service chains jump to KUBE-MARK-MASQ); the KUBE-SERVICES jumps
 * and the filter table go last, so traffic meets a service only once its whole chain tree exists.
 */
function batches(text: string, k: number, marker: string): string[] {
  const tables = parsePayload(text);
  const nat = tables.find((t) => t.name === 'nat');
  if (!nat) throw new Error('payload has no *nat table');
  const filter = tables.filter((t) => t !== nat);
  const byChain = new Map<string, string[]>();
  for (const r of nat.rules) if (PER_SERVICE.test(r.chain)) byChain.set(r.chain, [...(byChain.get(r.chain) ?? []), r.line]);
  const roots = nat.rules.filter((r) => r.chain === 'KUBE-SERVICES' && PER_SERVICE.test(jumpTarget(r.line) ?? ''));
  const topLevel = nat.declared.filter((c) => !PER_SERVICE.test(c));
  const files: string[] = [];
  for (let i = 0; i < roots.length; i += k) {
    const lines = ['*nat', ...(marker ? [marker] : [])];
    if (i === 0) {
      for (const c of topLevel) lines.push(`:${c} - [0:0]`);
      for (const r of nat.rules) if (!PER_SERVICE.test(r.chain) && r.chain !== 'KUBE-SERVICES') lines.push(r.line);
    }
    const chains: string[] = [];
    const seen = new Set<string>();
    const visit = (c: string) => {
      if (seen.has(c) || !PER_SERVICE.test(c)) return;
      seen.add(c);
      chains.push(c);
      for (const l of byChain.get(c) ?? []) visit(jumpTarget(l) ?? '');
    };
    for (const r of roots.slice(i, i + k)) visit(jumpTarget(r.line) ?? '');
    for (const c of chains) lines.push(`:${c} - [0:0]`);
    for (const c of chains) lines.push(...(byChain.get(c) ?? []));
    lines.push('COMMIT');
    files.push(lines.join('\n') + '\n');
  }
  // Flushing and refilling KUBE-SERVICES in one transaction: never a moment with half of it.
  const last = ['*nat', ...(marker ? [marker] : []), ':KUBE-SERVICES - [0:0]', ...nat.rules.filter((r) => r.chain === 'KUBE-SERVICES').map((r) => r.line), 'COMMIT'];
  files.push(write(filter) + last.join('\n') + '\n');
  return files;
}

function render(n: number): { full: string; partial: string } {
  const cluster = scaleCluster(n, ENDPOINTS_PER_SERVICE);
  const state = loadedState(cluster);
  const names = new ChainNameCache();
  const memo = new AppliedChainMemo();
  const first = renderRuleset(
    { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: null, existingNatChains: null, appliedChains: memo },
    OPTIONS,
    names,
  );
  const full = Buffer.from(first.payloadBytes).toString('latin1'); // copy: the renderer reuses its memory
  const active = new Set(first.activeNatChains);
  memo.commit(first.appliedChainUpdate!);
  state.onEndpointSliceUpdate(cluster.slices[0]!, sliceOf(0, ENDPOINTS_PER_SERVICE, 1));
  const applied = state.applyPendingChanges();
  const changed = new Set([...applied.services.updatedServices, ...applied.endpoints.updatedServices]);
  const second = renderRuleset(
    { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: changed, existingNatChains: active, appliedChains: memo },
    OPTIONS,
    names,
  );
  return { full, partial: Buffer.from(second.payloadBytes).toString('latin1') };
}

function main(): void {
  const sizes = arg('sizes', '500,1000').split(',').map(Number);
  const dir = arg('out', '/tmp/nft-shape');
  const ks = arg('batches', '').split(',').filter(Boolean).map(Number);
  const wanted = arg('variants', '');
  const keep = (name: string) => !wanted || wanted.split(',').includes(name);
  mkdirSync(dir, { recursive: true });
  for (const n of sizes) {
    const { full, partial } = render(n);
    const summary: string[] = [];
    for (const [name, text] of variants(full)) {
      if (!keep(name)) continue;
      writeFileSync(join(dir, `${name}-${n}.rules`), text);
      const rules = text.split('\n').filter((l) => l.startsWith('-A ')).length;
      const chains = text.split('\n').filter((l) => l.startsWith(':') || l.startsWith('-N ')).length;
      summary.push(`${name}: ${rules} rules, ${chains} chains, ${text.length} B`);
    }
    writeFileSync(join(dir, `partial-${n}.rules`), partial);
    for (const k of ks) {
      for (const [tag, marker] of [['batch', ''], ['zbatch', '-Z']] as const) {
        const files = batches(full, k, marker);
        files.forEach((f, i) => writeFileSync(join(dir, `${tag}-${n}-${k}-${String(i).padStart(3, '0')}.rules`), f));
        summary.push(`${tag} K=${k}: ${files.length} files`);
      }
    }
    process.stdout.write(`${n} services → ${dir}\n  ${summary.join('\n  ')}\n  partial: ${partial.length} B\n`);
  }
}

main();
