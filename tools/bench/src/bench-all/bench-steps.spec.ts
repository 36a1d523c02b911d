import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BENCH_STEPS, commandArgv, formatDuration, missingFor, saidSkipped, targetCommand } from './bench-steps.js';

const projectJson = readFileSync(fileURLToPath(new URL('../../project.json', import.meta.url)), 'utf8');

describe('bench:all steps', () => {
  it('names targets that exist, each recording with --record, the charts last', () => {
    for (const step of BENCH_STEPS) expect(() => commandArgv(targetCommand(projectJson, step.target))).not.toThrow();
    expect(BENCH_STEPS[BENCH_STEPS.length - 1]!.target).toBe('charts');
    for (const step of BENCH_STEPS.filter((s) => s.records.length > 0)) expect(step.args).toContain('--record');
  });

  it('regenerates every committed data file: each docs/perf/data/<id>.json is recorded by exactly one step', () => {
    const dataDir = fileURLToPath(new URL('../../../../docs/perf/data/', import.meta.url));
    const committed = readdirSync(dataDir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)).sort();
    const recorded = BENCH_STEPS.flatMap((s) => s.records).sort();
    expect(recorded).toEqual(committed);
  });

  it('splits a plain command and refuses shell syntax', () => {
    expect(commandArgv('node --max-old-space-size=8000 tools/bench/dist/memory/memory-profile.js')).toEqual(['node', '--max-old-space-size=8000', 'tools/bench/dist/memory/memory-profile.js']);
    expect(() => commandArgv('node a.js && rm -rf x')).toThrow(/no shell/);
    expect(() => commandArgv('node $(x)')).toThrow(/no shell/);
    expect(() => targetCommand(projectJson, 'no-such-target')).toThrow(/no command/);
  });

  it('skips what the machine lacks and reads a bench’s own SKIPPED line', () => {
    const nft = BENCH_STEPS.find((s) => s.target === 'bench-nftables')!;
    expect(missingFor(nft, new Set(['netns']))).toEqual(['root']);
    expect(missingFor(nft, new Set(['root', 'netns']))).toEqual([]);
    const ipvs = BENCH_STEPS.find((s) => s.target === 'bench-ipvs')!;
    expect(missingFor(ipvs, new Set())).toEqual([]);
    expect(missingFor(ipvs, new Set(['root']), 'partialWithout')).toEqual(['qemu']);
    expect(saidSkipped('a\nSKIPPED: needs root\n')).toBe('needs root');
    expect(saidSkipped('ran fine\n')).toBeUndefined();
  });

  it('prints durations an operator reads at a glance', () => {
    expect(formatDuration(4_400)).toBe('4 s');
    expect(formatDuration(754_000)).toBe('12 min 34 s');
    expect(formatDuration(3_900_000)).toBe('1 h 05 min');
  });
});
