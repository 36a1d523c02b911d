/**
 * `npm run bench:all`: every bench that records figures, then the chart writer, one after another,
 * each timed. A step whose needs the machine lacks (root, network namespaces) is skipped with the
 * reason; a step that fails or overruns its time is reported and the others still run. The exit code
 * is 1 when a step failed, 0 otherwise (skips included). Benches run as argument arrays (no shell),
 * each in its own process group, which is ended by its id on timeout or on our SIGINT/SIGTERM.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { netnsAvailable, onPath } from '@kube-proxy/testing-netns';
import { REPO_ROOT } from '../common/proxy-entry.js';
import { BENCH_STEPS, commandArgv, formatDuration, missingFor, saidSkipped, targetCommand, type BenchStep, type Capability } from './bench-steps.js';

type Outcome = { status: 'done' | 'skipped' | 'failed' | 'partial'; detail: string; ms: number };

const OUTPUT_TAIL = 64 * 1024;
const running = new Set<number>();

async function capabilities(): Promise<{ have: Set<Capability>; why: Map<Capability, string> }> {
  const have = new Set<Capability>();
  const why = new Map<Capability, string>();
  if (process.getuid?.() === 0) have.add('root');
  else why.set('root', 'not running as root');
  const ns = await netnsAvailable();
  if (ns.ok) have.add('netns');
  else why.set('netns', ns.reason ?? `missing ${ns.missingTools.join(', ')}`);
  if (onPath('qemu-system-x86_64')) have.add('qemu');
  else why.set('qemu', 'qemu-system-x86_64 is not installed');
  return { have, why };
}

function runStep(argv: readonly string[], timeoutMs: number): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let timedOut = false;
    const keep = (d: Buffer, to: NodeJS.WriteStream) => {
      to.write(d);
      output = (output + d.toString('utf8')).slice(-OUTPUT_TAIL);
    };
    child.stdout.on('data', (d: Buffer) => keep(d, process.stdout));
    child.stderr.on('data', (d: Buffer) => keep(d, process.stderr));
    if (child.pid !== undefined) running.add(child.pid);
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    }, timeoutMs);
    child.on('error', (err) => {
      output += `\n${String(err)}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (child.pid !== undefined) running.delete(child.pid);
      resolve({ code, output, timedOut });
    });
  });
}

async function oneStep(step: BenchStep, projectJson: string, caps: Awaited<ReturnType<typeof capabilities>>): Promise<Outcome> {
  const started = Date.now();
  const lacking = missingFor(step, caps.have);
  if (lacking.length > 0) return { status: 'skipped', detail: lacking.map((c) => caps.why.get(c)).join('; '), ms: 0 };
  const argv = [...commandArgv(targetCommand(projectJson, step.target)), ...step.args];
  console.log(`\n=== ${step.id}: ${argv.join(' ')}`);
  const partial = missingFor(step, caps.have, 'partialWithout');
  if (partial.length > 0) console.log(`(runs without ${partial.join(', ')}: ${partial.map((c) => caps.why.get(c)).join('; ')}; the bench says what it leaves out)`);
  const r = await runStep(argv, step.timeoutMin * 60_000);
  const ms = Date.now() - started;
  if (r.timedOut) return { status: 'failed', detail: `stopped after its ${step.timeoutMin}-minute limit`, ms };
  if (r.code !== 0) return { status: 'failed', detail: `exit ${r.code}: ${r.output.trim().split('\n').slice(-3).join(' / ')}`, ms };
  const skipped = saidSkipped(r.output);
  if (skipped !== undefined) return { status: 'skipped', detail: skipped, ms };
  const note = step.records.length > 0 ? `records ${step.records.map((id) => `docs/perf/data/${id}.json`).join(', ')}` : '';
  return { status: partial.length > 0 ? 'partial' : 'done', detail: note, ms };
}

async function main(): Promise<void> {
  const started = Date.now();
  const projectJson = readFileSync(join(REPO_ROOT, 'tools/bench/project.json'), 'utf8');
  const caps = await capabilities();
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  const steps = only ? BENCH_STEPS.filter((s) => only.includes(s.target)) : BENCH_STEPS;
  const results: { step: BenchStep; outcome: Outcome }[] = [];
  for (const step of steps) {
    const outcome = await oneStep(step, projectJson, caps);
    results.push({ step, outcome });
    console.log(`=== ${step.id}: ${outcome.status} in ${formatDuration(outcome.ms)}${outcome.detail ? ` (${outcome.detail})` : ''}`);
  }
  console.log('\n| step | status | time |\n|---|---|---|');
  for (const { step, outcome } of results) console.log(`| ${step.id} (${step.target}) | ${outcome.status}${outcome.detail ? `: ${outcome.detail}` : ''} | ${formatDuration(outcome.ms)} |`);
  console.log(`| total | | ${formatDuration(Date.now() - started)} |`);
  if (results.some((r) => r.outcome.status === 'failed')) process.exitCode = 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const pid of running) process.kill(-pid, 'SIGTERM');
    process.exit(130);
  });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
