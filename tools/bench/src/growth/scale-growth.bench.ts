/**
 * Scale-growth benchmark (issue 12, item 3; a measurement, not a test): how the proxy's startup cost
 * grows with the cluster, phase by phase, so that anything worse than linear stands out. For each
 * size (N ClusterIP Services × E endpoints, one slice each) it runs the real startup path
 * (scale-growth-phases.ts): decode of the API's list bodies, the source's handlers, ProxyState's
 * handlers (where the change trackers record), the trackers' apply into the maps, the full render,
 * and the iptables-legacy restore in a fresh network namespace. Per phase it prints wall time, heap
 * and external (Buffer) deltas and RSS, each read after a forced GC; then, per phase, the time and
 * retained memory per Service at each size divided by the same at the size before (1.00× = linear).
 * One Service with many endpoints in slices of 100 is measured the same way, at a fifth of its size
 * and at full size, judged per endpoint.
 *
 * Needs node --expose-gc (the nx target sets it) and the built proxy app (it loads the API source's
 * modules from apps/proxy/dist). The apply phase needs root, ip and iptables-legacy-restore; without
 * them, or with --apply=false, it is skipped with the reason printed. Touches only the network
 * namespace it creates (kpbench-growth-PID), deleted after each size.
 *
 * Usage: node --expose-gc --max-old-space-size=8000 tools/bench/dist/growth/scale-growth.bench.js
 *          [--sizes=1000,10000,30000] [--endpoints=5] [--big-service=5000] [--big-slice=100] [--apply=true]
 *          [--runs=1]   (more runs: per phase, the run with the median wall time is reported)
 */
import { accessSync, constants } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { delimiter, join } from 'node:path';
import { bigServiceApiLists, clusterApiLists } from './growth-cluster.js';
import { growthTable, perEndpoint, scenarioTable, type GrowthPair } from './growth-report.js';
import { medianByPhase } from './growth-ratios.js';
import { collect } from './phase-meter.js';
import { loadProxySource } from '../common/proxy-source-modules.js';
import { runScenario, type ApplyPlan, type ScenarioResult } from './scale-growth-scenario.js';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

function positiveInts(text: string, name: string): number[] {
  const xs = text.split(',').filter((x) => x !== '').map(Number);
  if (xs.some((x) => !Number.isInteger(x) || x < 0)) throw new Error(`--${name}: expected whole numbers, got "${text}"`);
  return xs;
}

function onPath(cmd: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function applyPlan(wanted: boolean): ApplyPlan {
  if (!wanted) return { run: false, reason: '--apply=false' };
  if (process.getuid?.() !== 0) return { run: false, reason: 'not root (a network namespace is needed)' };
  for (const tool of ['ip', 'iptables-legacy-restore', 'iptables-legacy-save']) if (!onPath(tool)) return { run: false, reason: `${tool} not found` };
  return { run: true, namespace: `kpbench-growth-${process.pid}` };
}

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const sizes = positiveInts(arg('sizes', '1000,10000,30000'), 'sizes').filter((n) => n > 0);
  const endpoints = positiveInts(arg('endpoints', '5'), 'endpoints')[0] ?? 5;
  const big = positiveInts(arg('big-service', '5000'), 'big-service')[0] ?? 0;
  const bigSlice = positiveInts(arg('big-slice', '100'), 'big-slice')[0] || 100;
  const apply = applyPlan(arg('apply', 'true') !== 'false');
  const repeat = Math.max(1, positiveInts(arg('runs', '1'), 'runs')[0] ?? 1);
  const source = await loadProxySource();

  log(`# Scale growth per startup phase — ${new Date().toISOString()}`);
  log();
  log(`node ${process.version}, ${cpus().length} CPUs, ${formatGiB(totalmem())} memory, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}; apply: ${apply.run ? 'iptables-legacy-restore in a fresh netns' : `skipped (${apply.reason})`}`);
  log('Phases as the proxy runs them (tools/bench/src/growth/scale-growth-phases.ts). The app runs "handlers: source" and');
  log('"handlers: ProxyState" as one synchronous chain per object; here the source\'s calls are recorded and replayed,');
  log('so each side is timed alone. ProxyState\'s handlers are where the change trackers parse and record each object;');
  log('"trackers" is applyPendingChanges (pending changes into the service and endpoints maps).');
  log('Memory: heap Δ / external Δ = heapUsed / external after the phase minus before it, both after a forced GC;');
  log('"retained" = heap Δ + external Δ (the renderer\'s buffers are external); RSS is the whole process after the phase.');
  log('The API list bodies are Buffers held through each size, outside every phase\'s delta (they are in RSS).');
  log('CPU (node) = this process\'s user + system time in the phase, GC and compiler helper threads included, and');
  log('"child" that of the restore it ran: CPU well under the wall time means the machine was busy elsewhere.');
  log('GC pauses = main-thread GC pauses in the phase; "time − GC" ratios take them out.');
  log();

  // JIT warm-up: the first size would otherwise pay for compiling every phase's code, and look cheaper
  // per Service at the next size than it is.
  const warm = Math.min(1000, sizes[0] ?? 1000);
  progress(`warm-up: ${warm} Services (not reported)...`);
  await runScenario('warm-up', 'Service', clusterApiLists(warm, endpoints), source, { run: false, reason: 'warm-up' });
  collect();

  const runs: ScenarioResult[] = [];
  for (const n of sizes) {
    progress(`measuring ${n} Services × ${endpoints} endpoints...`);
    const r = await repeated(repeat, () => runScenario(`${n} Services × ${endpoints} endpoints`, 'Service', clusterApiLists(n, endpoints), source, apply));
    runs.push(r);
    for (const line of scenarioTable(r)) log(line);
    log();
    collect();
  }

  if (runs.length > 1) {
    log('### Growth per Service (cost per Service at a size ÷ at the size before; 1.00× = linear, – = too small to compare)');
    log();
    const pairs: GrowthPair[] = runs.slice(1).map((to, i) => ({ label: `${to.services}÷${runs[i]!.services}`, from: runs[i]!, to }));
    for (const line of growthTable(pairs)) log(line);
    log();
  }

  if (big > 0) {
    const small = Math.max(bigSlice, Math.round(big / 5 / bigSlice) * bigSlice);
    const bigRuns: ScenarioResult[] = [];
    for (const e of small < big ? [small, big] : [big]) {
      progress(`measuring 1 Service × ${e} endpoints in slices of ${bigSlice}...`);
      const slices = Math.ceil(e / bigSlice);
      const label = `1 Service × ${e} endpoints in ${slices} slice${slices === 1 ? '' : 's'} of ${bigSlice}`;
      const r = await repeated(repeat, () => runScenario(label, 'endpoint', bigServiceApiLists(e, bigSlice), source, apply));
      bigRuns.push(r);
      for (const line of scenarioTable(r)) log(line);
      log();
      collect();
    }
    const pairs: GrowthPair[] = [];
    if (bigRuns.length === 2) pairs.push({ label: `${bigRuns[1]!.endpoints}÷${bigRuns[0]!.endpoints} ep`, from: bigRuns[0]!, to: bigRuns[1]! });
    // The same endpoint count spread over many small Services: is an endpoint dearer in a big Service?
    const peer = runs.find((r) => r.endpoints === bigRuns.at(-1)!.endpoints) ?? runs[0];
    if (peer) pairs.push({ label: `big÷(${peer.services}×${endpoints})`, from: perEndpoint(peer), to: bigRuns.at(-1)! });
    log('### One big Service, per endpoint (1.00× = the same cost per endpoint)');
    log();
    for (const line of growthTable(pairs)) log(line);
    log();
  }
  log(`${repeat === 1 ? 'One run' : `${repeat} runs`} per size. Load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (other work on the machine shows here).`);
}

/** `times` runs of one size as one result: per phase the median-wall run (growth-ratios.ts medianByPhase). */
async function repeated(times: number, run: () => Promise<ScenarioResult>): Promise<ScenarioResult> {
  const results: ScenarioResult[] = [];
  for (let i = 0; i < times; i++) {
    results.push(await run());
    collect();
  }
  const first = results[0]!;
  if (times === 1) return first;
  return { ...first, label: `${first.label} (median of ${times} runs per phase)`, phases: medianByPhase(results.map((r) => r.phases)), runWalls: results.map((r) => r.phases.map((p) => p.ms)) };
}

function formatGiB(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(0)} GiB`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
