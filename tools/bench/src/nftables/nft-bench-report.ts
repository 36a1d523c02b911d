/** The nftables sync bench's figures and how they are printed (pure: the spec checks the verdicts). */

/** The targets the nftables issue sets at 10k services × 5 endpoints. */
export const TARGETS = { startToKernelMs: 15_000, partialOverFloor: 2 } as const;

export interface SyncFigure {
  readonly totalMs: number;
  readonly kernelMs: number;
  /** nft reads of the table (a restart reads the one it takes over). */
  readonly readMs: number;
  readonly operations: number;
  readonly transactions: number;
}

export interface NftBenchRow {
  readonly services: number;
  /** Proxier cold start into an empty table (its own batches). */
  readonly cold: SyncFigure;
  /** The same texts with `nft -f FILE`, one file per transaction, into a fresh namespace. */
  readonly floorBatchedMs: number;
  /** The same texts concatenated into one transaction, into another fresh namespace. */
  readonly floorOneTxMs: number;
  /** A full sync with nothing changed. */
  readonly fullSync: SyncFigure;
  /** One-endpoint partial syncs (one per repetition) and the same texts applied with `nft -f`. */
  readonly partial: readonly SyncFigure[];
  readonly partialFloorMs: readonly number[];
  /** A second proxier over the loaded table (one rebuilding transaction). */
  readonly restart: SyncFigure;
  /** `bin/kube-proxy --proxy-mode=nftables --manifests=DIR --once`, spawn → exit, empty table; null if not run. */
  readonly endToEndMs: number | null;
  /** That run's peak RSS in MB (GNU time); null if not run or not measurable. */
  readonly endToEndRssMb: number | null;
}

export interface BatchFigure {
  readonly batch: number;
  /** How the sweep named it (B or B:M), when not just the batch. */
  readonly label?: string;
  readonly transactions: number;
  readonly jsMs: number;
  readonly kernelMs: number;
  readonly totalMs: number;
  /** Every repetition's total, when there were several (this figure is the median one). */
  readonly repsMs?: readonly number[];
}

export const fmtMs = (x: number): string => (Number.isNaN(x) ? '–' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`);
export const fmtRatio = (a: number, b: number): string => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : '–');

/** The figure whose total is the median of the repetitions (the lower middle one of an even count), with every total. */
export function medianFigure(reps: readonly BatchFigure[]): BatchFigure {
  if (reps.length === 0) throw new Error('no repetitions');
  const sorted = [...reps].sort((a, b) => a.totalMs - b.totalMs);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, repsMs: reps.map((r) => r.totalMs) };
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const brackets = (xs: readonly number[]) => `[${xs.map((x) => x.toFixed(0)).join('/')}]`;
const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');

export function formatReport(rows: readonly NftBenchRow[], sweeps: ReadonlyArray<{ services: number; runs: readonly BatchFigure[] }>): string[] {
  const out: string[] = [];
  if (rows.length > 0) out.push(...formatRows(rows));
  for (const s of sweeps) {
    if (s.runs.length === 0) continue;
    const best = s.runs.reduce((a, b) => (b.totalMs < a.totalMs ? b : a));
    out.push('');
    out.push(`Cold-start batch sweep at ${s.services} services (same plan, coldStartBatches(…, batch), fresh namespace each; median run of the repetitions)`);
    out.push('| batch | transactions | JS | kernel | total | vs fastest |');
    out.push('|---|---|---|---|---|---|');
    for (const b of s.runs) {
      const reps = b.repsMs && b.repsMs.length > 1 ? ` ${brackets(b.repsMs)}` : '';
      out.push(`| ${b.label ?? b.batch}${b === best ? ' (fastest)' : ''} | ${b.transactions} | ${fmtMs(b.jsMs)} | ${fmtMs(b.kernelMs)} | ${fmtMs(b.totalMs)}${reps} | ${fmtRatio(b.totalMs, best.totalMs)} |`);
    }
  }
  return out;
}

function formatRows(rows: readonly NftBenchRow[]): string[] {
  const out: string[] = [];
  out.push('Cold start (empty table) and its kernel floor');
  out.push('| services | ops / tx | JS (render+plan) | kernel (nft runs) | total | floor: same txs, nft -f | floor: one tx | kernel / floor | one tx / batched |');
  out.push('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const c = r.cold;
    out.push(
      `| ${r.services} | ${c.operations} / ${c.transactions} | ${fmtMs(c.totalMs - c.kernelMs - c.readMs)} | ${fmtMs(c.kernelMs)} | ${fmtMs(c.totalMs)} | ` +
        `${fmtMs(r.floorBatchedMs)} | ${fmtMs(r.floorOneTxMs)} | ${fmtRatio(c.kernelMs, r.floorBatchedMs)} | ${fmtRatio(r.floorOneTxMs, r.floorBatchedMs)} |`,
    );
  }
  out.push('');
  out.push(`Steady state, restart, end to end (targets: partial ≤ ${TARGETS.partialOverFloor}× floor; start → all rules in the kernel ≤ ${TARGETS.startToKernelMs / 1000} s)`);
  out.push('| services | full sync, no change | its ops | partial (1 endpoint) | partial floor (nft -f) | partial / floor | restart (takes the table over) | restart ops | kube-proxy --once | its peak RSS | partial: our own compute (less nft) |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const p = r.partial.map((x) => x.totalMs);
    const compute = r.partial.map((x) => x.totalMs - x.kernelMs);
    const pm = median(p);
    const fm = median(r.partialFloorMs);
    const e2e = r.endToEndMs === null ? '–' : `${fmtMs(r.endToEndMs)} (${verdict(r.endToEndMs <= TARGETS.startToKernelMs)})`;
    out.push(
      `| ${r.services} | ${fmtMs(r.fullSync.totalMs)} | ${r.fullSync.operations} in ${r.fullSync.transactions} tx | ${fmtMs(pm)} ${brackets(p)} | ${fmtMs(fm)} ${brackets(r.partialFloorMs)} | ` +
        `${fmtRatio(pm, fm)} (${verdict(pm <= TARGETS.partialOverFloor * fm)}) | ${fmtMs(r.restart.totalMs)} (kernel ${fmtMs(r.restart.kernelMs)}, reads ${fmtMs(r.restart.readMs)}) | ${r.restart.operations} in ${r.restart.transactions} tx | ${e2e} | ${r.endToEndRssMb === null ? '–' : `${r.endToEndRssMb.toFixed(0)} MB`} | ${fmtMs(median(compute))} [${compute.map((x) => x.toFixed(1)).join('/')}] |`,
    );
  }
  return out;
}
