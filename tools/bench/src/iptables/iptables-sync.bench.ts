/**
 * Benchmark of the iptables backend's sync (not a test): for N services × 5 endpoints it reports
 *  - compute: feeding Services/EndpointSlices through core's change trackers into the maps,
 *  - render: the full iptables-restore payload (median of 3 after one warm-up), and its size,
 *  - apply: the kernel's iptables-restore time for that payload in a fresh network namespace,
 *    for iptables-legacy and iptables-nft,
 *  - partial: payload size and apply time of the partial sync after one endpoint changed,
 * and the ratios the iptables issue sets targets for (render ≤ 0.25× legacy apply at 10k; partial
 * payload ≤ 0.5% of full). Needs root and iptables for the apply columns (skipped otherwise).
 *
 * Usage: node tools/bench/dist/iptables/iptables-sync.bench.js [--sizes=1000,10000] [--variants=legacy,nft]
 *                                                     [--nft-max=10000]
 */
import type { AppliedChanges } from '@kube-proxy/core';
import { AppliedChainMemo, ChainNameCache, renderRuleset } from '@kube-proxy/backend-iptables/internal';
import { RESTORE_LIMIT_MS, RestoreNamespace, type Variant } from '../common/netns-restore.js';
import { scaleCluster, sliceOf } from '../common/scale-cluster.js';
import { BENCH_RENDER_OPTIONS } from '../common/bench-render-options.js';
import { loadedState } from '../common/bench-state.js';

const ENDPOINTS_PER_SERVICE = 5;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`);
const fmtApply = (x: number | null | undefined) => (x === undefined ? '–' : x === null ? `> ${RESTORE_LIMIT_MS / 60_000} min (killed)` : fmt(x));

const OPTIONS = BENCH_RENDER_OPTIONS;

function changedServices(applied: AppliedChanges): Set<string> {
  return new Set([...applied.services.updatedServices, ...applied.endpoints.updatedServices]);
}

interface Row {
  n: number;
  computeMs: number;
  renderMs: number;
  fullBytes: number;
  fullLines: number;
  partialRenderMs: number;
  partialBytes: number;
  apply: Partial<Record<Variant, { full: number | null; partial: number | null }>>;
}

async function measure(n: number, variants: Variant[], nftMax: number): Promise<Row> {
  const cluster = scaleCluster(n, ENDPOINTS_PER_SERVICE);

  let t = process.hrtime.bigint();
  const state = loadedState(cluster);
  const computeMs = ms(t);

  const names = new ChainNameCache();
  // What the last successful restore wrote: lets a partial sync leave unchanged top-level chains out.
  const memo = new AppliedChainMemo();
  const full = () =>
    renderRuleset(
      { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: null, existingNatChains: null, appliedChains: memo },
      OPTIONS,
      names,
    );
  memo.commit(full().appliedChainUpdate!); // warm-up: JIT and the chain-name cache, as in a running proxier after its first sync
  const times: number[] = [];
  let fullPayload = Buffer.alloc(0);
  let activeChains: ReadonlySet<string> = new Set();
  for (let i = 0; i < 3; i++) {
    t = process.hrtime.bigint();
    const r = full();
    const payload = r.payloadBytes; // the bytes handed to iptables-restore
    times.push(ms(t));
    fullPayload = Buffer.from(payload); // copy: the renderer reuses its memory on the next call
    activeChains = new Set(r.activeNatChains);
    memo.commit(r.appliedChainUpdate!);
  }

  // One endpoint of one service moves: the partial sync a running node does most often.
  state.onEndpointSliceUpdate(cluster.slices[0]!, sliceOf(0, ENDPOINTS_PER_SERVICE, 1));
  t = process.hrtime.bigint();
  const applied = state.applyPendingChanges();
  const partial = renderRuleset(
    { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: changedServices(applied), existingNatChains: activeChains, appliedChains: memo },
    OPTIONS,
    names,
  );
  const partialPayload = Buffer.from(partial.payloadBytes);
  const partialRenderMs = ms(t);
  if (partial.staleChainsDeleted !== 1) throw new Error(`expected the moved endpoint's chain to be deleted, got ${partial.staleChainsDeleted}`);

  const row: Row = {
    n,
    computeMs,
    renderMs: median(times),
    fullBytes: fullPayload.length,
    fullLines: fullPayload.toString('latin1').split('\n').length - 1,
    partialRenderMs,
    partialBytes: partialPayload.length,
    apply: {},
  };

  for (const variant of variants) {
    if (variant === 'nft' && n > nftMax) continue;
    const ns = await RestoreNamespace.create(`kp-bench-${process.pid}-${variant}`, variant);
    try {
      const fullMs = await ns.restore(fullPayload, { wholeTables: true });
      // A full load the kernel tool could not finish leaves nothing to apply a partial sync on.
      const partialMs = fullMs === null ? null : await ns.restore(partialPayload);
      if (fullMs !== null) {
        const nat = await ns.save('nat');
        // The kernel must hold what we rendered: every service's chain and the moved endpoint.
        if (!nat.includes('-A KUBE-SERVICES') || !nat.includes('10.128.')) throw new Error(`${variant}: nat table does not hold the payload`);
      }
      row.apply[variant] = { full: fullMs, partial: partialMs };
    } finally {
      await ns.destroy();
    }
    process.stderr.write(`  ${n} services: ${variant} applied\n`);
  }
  return row;
}

async function main(): Promise<void> {
  const sizes = arg('sizes', '1000,10000').split(',').map(Number);
  const canApply = process.getuid?.() === 0;
  const variants = (canApply ? arg('variants', 'legacy,nft').split(',') : []) as Variant[];
  const nftMax = Number(arg('nft-max', '10000'));
  if (!canApply) process.stderr.write('not root: apply columns skipped\n');

  const rows: Row[] = [];
  for (const n of sizes) {
    process.stderr.write(`measuring ${n} services × ${ENDPOINTS_PER_SERVICE} endpoints...\n`);
    rows.push(await measure(n, variants, nftMax));
  }

  const out: string[] = [];
  out.push(`iptables sync benchmark — ${new Date().toISOString()}, node ${process.version}, ${ENDPOINTS_PER_SERVICE} endpoints/service`);
  out.push('');
  out.push('| services | compute | render full | full payload | legacy apply | nft apply | render / legacy apply | partial payload | partial / full | partial render | legacy partial apply | nft partial apply |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const leg = r.apply.legacy;
    const nft = r.apply.nft;
    out.push(
      `| ${r.n} | ${fmt(r.computeMs)} | ${fmt(r.renderMs)} | ${(r.fullBytes / 1e6).toFixed(2)} MB / ${r.fullLines} lines | ` +
        `${fmtApply(leg?.full)} | ${fmtApply(nft?.full)} | ${leg?.full ? (r.renderMs / leg.full).toFixed(3) + '×' : '–'} | ` +
        `${r.partialBytes} B | ${((100 * r.partialBytes) / r.fullBytes).toFixed(3)}% | ${fmt(r.partialRenderMs)} | ` +
        `${fmtApply(leg?.partial)} | ${fmtApply(nft?.partial)} |`,
    );
  }
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
