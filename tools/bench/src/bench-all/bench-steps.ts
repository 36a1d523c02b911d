/**
 * What `npm run bench:all` runs, in order: the benches that record figures (each with `--record`),
 * then the chart writer. A step names its nx target in tools/bench/project.json, whose command is
 * read from there (one definition of how a bench is started); what a step needs from the machine is
 * checked before it starts, so a missing capability is a skip, not a crash.
 */

/** Root (namespaces, rules), working network namespaces, QEMU (the IPVS guest). */
export type Capability = 'root' | 'netns' | 'qemu';

export interface BenchStep {
  readonly id: string;
  /** tools/bench/project.json target whose command runs it. */
  readonly target: string;
  readonly args: readonly string[];
  /** Without these the step is skipped. */
  readonly needs: readonly Capability[];
  /** Without these it runs, but says what it leaves out. */
  readonly partialWithout: readonly Capability[];
  /** The data files (docs/perf/data/<id>.json) it writes. */
  readonly records: readonly string[];
  /** Killed (its process group) past this. */
  readonly timeoutMin: number;
}

/**
 * Memory and the iptables benches first, while nothing else of ours has warmed the machine; the
 * IPVS bench (longest, in a QEMU guest) after the namespace benches; the charts last.
 */
export const BENCH_STEPS: readonly BenchStep[] = [
  { id: 'iptables (legacy and nft) at scale', target: 'bench-iptables-scale', args: ['--sizes=1000x5,10000x5,30000x5,45000x1', '--runs=3', '--record'], needs: ['root', 'netns'], partialWithout: [], records: ['iptables-scale'], timeoutMin: 120 },
  { id: 'nftables at scale', target: 'bench-nftables', args: ['--sizes=10000,45000x1,1000', '--no-once', '--no-restart', '--no-one-tx', '--sweep-sizes=', '--running', '--changes=3', '--settle-s=20', '--record'], needs: ['root', 'netns'], partialWithout: [], records: ['nftables-scale'], timeoutMin: 120 },
  { id: 'nftables restart', target: 'bench-nftables-restart', args: ['--services=2000,10000', '--endpoints=5', '--reps=3', '--listing-reps=1', '--record'], needs: ['root', 'netns'], partialWithout: [], records: ['nftables-restart'], timeoutMin: 90 },
  { id: 'userspace at scale', target: 'bench-userspace-scale', args: ['--services=1000,10000,19000,30000', '--settle=20', '--changes=3', '--record'], needs: ['root', 'netns'], partialWithout: [], records: ['userspace-scale'], timeoutMin: 60 },
  { id: 'IPVS', target: 'bench-ipvs', args: ['--only-scale', '--record'], needs: [], partialWithout: ['root', 'qemu'], records: ['ipvs-scale'], timeoutMin: 120 },
  { id: 'charts', target: 'charts', args: [], needs: [], partialWithout: [], records: [], timeoutMin: 5 },
];

/** A project.json command (`node [flags] script`) as an argument array; a shell construct is refused, never interpreted. */
export function commandArgv(command: string): string[] {
  if (/[|&;<>()$`\\"'*?{}]/.test(command)) throw new Error(`not a plain command (bench-all runs no shell): ${command}`);
  const argv = command.trim().split(/\s+/);
  if (argv.length === 0 || argv[0] === '') throw new Error('empty command');
  return argv;
}

/** The command of `target` in a project.json's text. */
export function targetCommand(projectJson: string, target: string): string {
  const project = JSON.parse(projectJson) as { targets?: Record<string, { options?: { command?: unknown } }> };
  const command = project.targets?.[target]?.options?.command;
  if (typeof command !== 'string') throw new Error(`tools/bench/project.json has no command for target ${target}`);
  return command;
}

/** What the step still needs from `have`, or [] when it can run. */
export function missingFor(step: BenchStep, have: ReadonlySet<Capability>, kind: 'needs' | 'partialWithout' = 'needs'): Capability[] {
  return step[kind].filter((c) => !have.has(c));
}

/** A bench that decided itself it cannot run says so on a line starting with SKIPPED (and exits 0). */
export function saidSkipped(output: string): string | undefined {
  const line = output.split('\n').find((l) => l.startsWith('SKIPPED'));
  return line === undefined ? undefined : line.replace(/^SKIPPED:?\s*/, '');
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${String(s % 60).padStart(2, '0')} s` : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
