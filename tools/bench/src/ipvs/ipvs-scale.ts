/**
 * The scale part of the IPVS bench (issue 24): per size, the one-endpoint change's compute before
 * (the whole state rebuilt and diffed, as every sync did) and after (the partial sync), the repair
 * sync's compute, the cold start's compute; the proxier's memory in a process of its own
 * (ipvs-proxier-memory.ts); and with --record, docs/perf/data/ipvs-scale.json for the charts.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { renderIpsetRestore, renderIpvsadmRestore } from '@kube-proxy/backend-ipvs/internal';
import { measureIncrementalChange, measureRepair, type IncrementalChange, type RepairCost } from './ipvs-incremental.js';
import type { DryRunProcessMemory } from './ipvs-dry-run-process.js';
import { measureEndpointChange, measureFullSync, type EndpointChange } from './ipvs-workload.js';
import { scaleCluster } from '../common/scale-cluster.js';

export interface ScaleRow {
  readonly n: number;
  readonly endpoints: number;
  /** Trackers + IpvsStateIndex.build/materialize + the full batches (an empty kernel's diff is the whole state). */
  readonly coldStartComputeMs: number;
  readonly before: EndpointChange;
  readonly after: IncrementalChange;
  readonly repair: RepairCost;
  readonly load: string;
}

export interface MemoryRow {
  readonly services: number;
  readonly endpoints: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  readonly baseRssMiB: number;
  readonly heapUsedMiB: number;
  readonly ipvsStateHeapMiB: number;
  readonly load: string;
}

export const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const load1 = (): number => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const fmt = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 2 : 1)} ms`);

export async function measureScale(n: number, endpoints: number): Promise<ScaleRow> {
  process.stderr.write(`scale: ${n} services × ${endpoints} endpoints (load ${loadavg()})...\n`);
  const full = measureFullSync(n, scaleCluster(n, endpoints));
  const before = measureEndpointChange(full, endpoints);
  const { change: after, index } = await measureIncrementalChange(full, endpoints);
  const t = process.hrtime.bigint();
  const state = index.materialize();
  const batches = renderIpvsadmRestore(state).length + renderIpsetRestore(state).length;
  const batchMs = Number(process.hrtime.bigint() - t) / 1e6;
  const repair = await measureRepair(index, { ipvsadm: renderIpvsadmRestore(state), ipset: renderIpsetRestore(state), address: '' });
  if (batches === 0) throw new Error('empty full batches');
  return { n, endpoints, coldStartComputeMs: full.trackersMs + after.indexBuildMs + batchMs, before, after, repair, load: loadavg() };
}

const execFileP = promisify(execFile);

/** ipvs-proxier-memory.js in a child node with --expose-gc. */
export async function measureMemory(services: number, endpoints: number): Promise<MemoryRow> {
  const script = fileURLToPath(new URL('./ipvs-proxier-memory.js', import.meta.url));
  process.stderr.write(`memory: ${services} services × ${endpoints} endpoints (load ${loadavg()})...\n`);
  const { stdout } = await execFileP(process.execPath, ['--expose-gc', script, `--services=${services}`, `--endpoints=${endpoints}`], { timeout: 600_000, maxBuffer: 1 << 20 });
  return { ...(JSON.parse(stdout.trim().split('\n').at(-1) as string) as Omit<MemoryRow, 'load'>), load: loadavg() };
}

export function scaleSection(rows: readonly ScaleRow[], memory: readonly MemoryRow[], processes: readonly DryRunProcessMemory[]): string[] {
  const out: string[] = [];
  out.push('One endpoint of one service moved: our own compute before (whole state rebuilt + diffed) and after (partial sync), bound ≤ 50 ms:');
  out.push('');
  out.push('| services × endpoints | before: rebuild + diff (trackers / state / diffs) | after: partial sync (trackers / ports+index / batches) | every round | bound ≤ 50 ms | repair sync compute (parse / materialize / diff; read-back bytes) | cold start compute | load |');
  out.push('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const b = r.before;
    const a = r.after;
    const p = r.repair;
    out.push(
      `| ${r.n} × ${r.endpoints} | ${fmt(b.computeMs)} (${fmt(b.trackersMs)} / ${fmt(b.stateMs)} / ${fmt(b.diffMs)}) | ${fmt(a.computeMs)} (${fmt(a.trackersMs)} / ${fmt(a.indexMs)} / ${fmt(a.batchesMs)}) | ` +
        `${a.everyRoundMs.map(fmt).join(', ')} | ${a.computeMs <= 50 ? 'holds' : 'OVER'} | ${fmt(p.totalMs)} (${fmt(p.parseMs)} / ${fmt(p.materializeMs)} / ${fmt(p.diffMs)}; ${(p.readBackBytes / 1e6).toFixed(2)} MB) | ${fmt(r.coldStartComputeMs)} | ${r.load} |`,
    );
  }
  out.push('');
  out.push('Memory of the proxier\'s data (own process, after a full GC: API objects + trackers + IpvsStateIndex + AppliedIpvs):');
  out.push('');
  out.push('| services × endpoints | RSS | peak RSS | node baseline RSS | heap used | of which the IPVS index + applied view | load |');
  out.push('|---|---|---|---|---|---|---|');
  for (const m of memory) {
    out.push(`| ${m.services} × ${m.endpoints} | ${m.rssMiB.toFixed(0)} MB | ${m.peakRssMiB.toFixed(0)} MB | ${m.baseRssMiB.toFixed(0)} MB | ${m.heapUsedMiB.toFixed(0)} MB | ${m.ipvsStateHeapMiB.toFixed(0)} MB | ${m.load} |`);
  }
  out.push('');
  out.push('The whole `bin/kube-proxy --proxy-mode=ipvs --dry-run --manifests` process (its in-memory kernel included), 20 s after its first sync:');
  out.push('');
  out.push('| services × endpoints | first sync (spawn → complete) | RSS | peak RSS (VmHWM) | load |');
  out.push('|---|---|---|---|---|');
  for (const m of processes) out.push(`| ${m.services} × ${m.endpoints} | ${m.firstSyncS.toFixed(1)} s | ${m.rssMiB.toFixed(0)} MB | ${m.peakRssMiB.toFixed(0)} MB | ${m.load} |`);
  return out;
}

interface Point {
  readonly services: number;
  readonly endpoints: number;
  readonly value: number;
}

/** docs/perf/data/ipvs-scale.json (format of the charts' data: one file per bench id). */
export function recordScale(command: string, measuredAt: string, loadAtStart: number, rows: readonly ScaleRow[], memory: readonly MemoryRow[], processes: readonly DryRunProcessMemory[]): string {
  const pts = (f: (r: ScaleRow) => number): Point[] => rows.map((r) => ({ services: r.n, endpoints: r.endpoints, value: Number(f(r).toFixed(3)) }));
  const mem = (f: (m: MemoryRow) => number): Point[] => memory.map((m) => ({ services: m.services, endpoints: m.endpoints, value: Number(f(m).toFixed(1)) }));
  const series = [
    { mode: 'ipvs', metric: 'change-compute-ms', source: 'ours', label: 'kube-proxy-ts IPVS partial sync: one-endpoint change, our own compute', points: pts((r) => r.after.computeMs) },
    { mode: 'ipvs', metric: 'change-compute-ms', source: 'ours', label: 'before (every sync rebuilt and diffed the whole state): one-endpoint change compute', points: pts((r) => r.before.computeMs) },
    { mode: 'ipvs', metric: 'change-compute-ms', source: 'bound', label: 'issue 24 bound: ≤ 50 ms at 10k', points: [{ services: 10000, endpoints: 5, value: 50 }] },
    { mode: 'ipvs', metric: 'full-resync-s', source: 'ours', label: 'IPVS repair sync compute (read-back parse + whole state + full diffs), every --ipvs-sync-period', points: pts((r) => r.repair.totalMs / 1000) },
    { mode: 'ipvs', metric: 'cold-start-s', source: 'ours', label: 'IPVS cold start compute (trackers + index + full batches), host', points: pts((r) => r.coldStartComputeMs / 1000) },
    { mode: 'ipvs', metric: 'rss-mb', source: 'ours', label: 'IPVS proxier data RSS (API objects, trackers, index, applied view; own process, after GC)', points: mem((m) => m.rssMiB) },
    { mode: 'ipvs', metric: 'peak-rss-mb', source: 'ours', label: 'IPVS proxier data peak RSS (same process)', points: mem((m) => m.peakRssMiB) },
    { mode: 'ipvs', metric: 'rss-mb', source: 'ours', label: 'bin/kube-proxy --proxy-mode=ipvs --dry-run --manifests, whole process incl. its in-memory kernel, 20 s after the first sync', points: processes.map((m) => ({ services: m.services, endpoints: m.endpoints, value: Number(m.rssMiB.toFixed(1)) })) },
    { mode: 'ipvs', metric: 'peak-rss-mb', source: 'ours', label: 'bin/kube-proxy --proxy-mode=ipvs --dry-run --manifests, whole process, VmHWM', points: processes.map((m) => ({ services: m.services, endpoints: m.endpoints, value: Number(m.peakRssMiB.toFixed(1)) })) },
    { mode: 'ipvs', metric: 'rss-mb', source: 'bound', label: 'issue 24 bound: ≤ 200 MB at 10k, ≤ 450 MB at 30k', points: [{ services: 10000, endpoints: 5, value: 200 }, { services: 30000, endpoints: 5, value: 450 }] },
  ];
  const doc = { id: 'ipvs-scale', command, measuredAt, load1: [loadAtStart, load1()], series };
  const dir = fileURLToPath(new URL('../../../../docs/perf/data/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = `${dir}ipvs-scale.json`;
  writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  return file;
}

export { load1 };
