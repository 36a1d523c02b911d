/**
 * Seeds and run counts of the fuzz properties: a fixed seed by default, so every run of `npm test`
 * checks the same cases; FUZZ_SEED=<int> picks another one, FUZZ_RUNS=<n> scales the run count, and
 * the seed in use is part of every failure message so a failure can be replayed exactly.
 */

/** The seed every fuzz property uses unless FUZZ_SEED says otherwise. */
export const DEFAULT_FUZZ_SEED = 20261201;

/** The seed of this run: FUZZ_SEED when it is an integer, else DEFAULT_FUZZ_SEED. */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['FUZZ_SEED'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_FUZZ_SEED;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return n | 0;
}

/** `runs`, or FUZZ_RUNS when set (a positive integer), for longer local fuzzing sessions. */
export function fuzzRuns(runs: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['FUZZ_RUNS'];
  if (raw === undefined || raw.trim() === '') return runs;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** How to replay a run: printed with every failure. */
export function replayHint(seed: number): string {
  return `fuzz seed ${seed} (replay with FUZZ_SEED=${seed})`;
}
