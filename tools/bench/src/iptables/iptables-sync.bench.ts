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
import { RESTORE_LIMIT_MS, type Variant } from '../common/netns-restore.js';
import { measureSync, type SyncRow } from './sync-measure.js';

const ENDPOINTS_PER_SERVICE = 5;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const fmt = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`);
const fmtApply = (x: number | null | undefined) => (x === undefined ? '–' : x === null ? `> ${RESTORE_LIMIT_MS / 60_000} min (killed)` : fmt(x));

async function main(): Promise<void> {
  const sizes = arg('sizes', '1000,10000').split(',').map(Number);
  const canApply = process.getuid?.() === 0;
  const variants = (canApply ? arg('variants', 'legacy,nft').split(',') : []) as Variant[];
  const nftMax = Number(arg('nft-max', '10000'));
  if (!canApply) process.stderr.write('not root: apply columns skipped\n');

  const rows: SyncRow[] = [];
  for (const n of sizes) {
    process.stderr.write(`measuring ${n} services × ${ENDPOINTS_PER_SERVICE} endpoints...\n`);
    rows.push(await measureSync(n, ENDPOINTS_PER_SERVICE, variants, nftMax));
  }

  const out: string[] = [];
  out.push(`iptables sync benchmark — ${new Date().toISOString()}, node ${process.version}, ${ENDPOINTS_PER_SERVICE} endpoints/service`);
  out.push('');
  out.push('| services | compute | render full | full payload | legacy apply | nft apply | render / legacy apply | partial payload | partial / full | partial render | one-endpoint change, compute (median of 5) | legacy partial apply | nft partial apply |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const leg = r.apply.legacy;
    const nft = r.apply.nft;
    out.push(
      `| ${r.n} | ${fmt(r.computeMs)} | ${fmt(r.renderMs)} | ${(r.fullBytes / 1e6).toFixed(2)} MB / ${r.fullLines} lines | ` +
        `${fmtApply(leg?.full)} | ${fmtApply(nft?.full)} | ${leg?.full ? (r.renderMs / leg.full).toFixed(3) + '×' : '–'} | ` +
        `${r.partialBytes} B | ${((100 * r.partialBytes) / r.fullBytes).toFixed(3)}% | ${fmt(r.partialRenderMs)} | ${fmt(r.changeComputeMs)} | ` +
        `${fmtApply(leg?.partial)} | ${fmtApply(nft?.partial)} |`,
    );
  }
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
