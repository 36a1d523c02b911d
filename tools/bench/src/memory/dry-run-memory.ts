/**
 * Memory of the whole `bin/kube-proxy --dry-run --once --proxy-mode=iptables --manifests=FILE`
 * process at scale (issue 12, item 1): peak RSS over the process's life (GNU time's maxrss), the
 * median of `runs` runs, and optionally one more run with a heap snapshot taken as it writes its
 * output (heap-snapshot-at-output.mjs, beside this file), the moment every structure the run built is
 * still live. The snapshot run is not one of the measured runs (writing a snapshot costs memory).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runMeasuringPeak, type PeakRun } from '../common/process-memory.js';
import { KUBE_PROXY_BIN, proxyMainJs } from '../common/proxy-entry.js';

const MAIN_JS = proxyMainJs();
const RUN_TIMEOUT_MS = 300_000;

function preloadPath(): string {
  const here = fileURLToPath(new URL('./heap-snapshot-at-output.mjs', import.meta.url));
  return existsSync(here) ? here : fileURLToPath(new URL('../../src/memory/heap-snapshot-at-output.mjs', import.meta.url));
}

export interface DryRunMemory {
  readonly runs: readonly PeakRun[];
  readonly medianPeakKiB: number;
  readonly medianWallMs: number;
  /** The first run's output (every `# sync` block), for the kernel yardstick. */
  readonly output: Buffer;
  readonly snapshot?: string;
}

/** The last `# sync` block of a dry-run output: the iptables-restore text of that sync's tables. */
export function lastSyncTables(output: Buffer): Buffer {
  const text = output.toString('latin1');
  const at = text.lastIndexOf('# sync ');
  const from = at < 0 ? 0 : text.indexOf('\n', at) + 1;
  return Buffer.from(text.slice(from), 'latin1');
}

const dryRunArgs = (manifests: string) => ['--dry-run', '--once', '--proxy-mode=iptables', `--manifests=${manifests}`];

/** A measured run is bin/kube-proxy itself; the snapshot run is the same main.js with the preload. */
async function once(manifests: string, snapshot?: string, keepStdout = false): Promise<PeakRun> {
  if (!existsSync(MAIN_JS)) throw new Error(`${MAIN_JS} is missing: build first`);
  const r = snapshot
    ? await runMeasuringPeak(process.execPath, ['--import', preloadPath(), MAIN_JS, ...dryRunArgs(manifests)], {
        timeoutMs: RUN_TIMEOUT_MS,
        env: { ...process.env, KP_HEAP_SNAPSHOT: snapshot },
      })
    : await runMeasuringPeak(KUBE_PROXY_BIN, dryRunArgs(manifests), { timeoutMs: RUN_TIMEOUT_MS, keepStdout });
  if (r.exitCode !== 0 || r.stdoutBytes === 0) throw new Error(`the dry run failed (exit ${r.exitCode}, ${r.stdoutBytes} bytes out):\n${r.stderr.slice(-3000)}`);
  return r;
}

export async function measureDryRun(manifests: string, runs: number, snapshot?: string): Promise<DryRunMemory> {
  const results: PeakRun[] = [];
  for (let i = 0; i < runs; i++) results.push(await once(manifests, undefined, i === 0));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  if (snapshot) await once(manifests, snapshot);
  return {
    runs: results.map(({ stdout: _kept, ...rest }) => rest),
    medianPeakKiB: median(results.map((r) => r.peakRssKiB)),
    medianWallMs: median(results.map((r) => r.wallMs)),
    output: results[0]!.stdout!,
    ...(snapshot ? { snapshot } : {}),
  };
}
