import fc from 'fast-check';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { CORE_VALIDATOR, fuzzCluster, fuzzRuns, fuzzSeed, replayHint, runPipeline, showValue, validatedRunProblems } from '@kube-proxy/testing-fuzz';
import { ObjectValidation } from './validating-handlers.js';

// Property-based fuzzing of the app's own path: every generated object (valid, invalid, hostile,
// garbage) goes through ObjectValidation.wrap in front of the iptables Provider, as every source
// delivers it. Seeded (FUZZ_SEED, default fixed), bounded (FUZZ_RUNS scales the run count).

const SEED = fuzzSeed();

describe(`fuzz: sources → ObjectValidation → iptables Provider (${replayHint(SEED)})`, () => {
  it('passes only valid objects on: no throw, well-formed payloads, each rejected object skipped with a warning and kept out of the rules, valid Service ports in', async () => {
    try {
      await fc.assert(
        fc.asyncProperty(fuzzCluster(), async (cluster) => {
          const loggers: RecordingLogger[] = [];
          const run = await runPipeline(cluster, {
            validator: CORE_VALIDATOR,
            front: (provider) => {
              const logger = new RecordingLogger();
              loggers.push(logger);
              return new ObjectValidation(logger).wrap(provider);
            },
          });
          const problems = validatedRunProblems(run);
          const rejected = [run.node, ...run.services, ...run.slices].filter((v) => v.errors.length > 0).length;
          for (const logger of loggers) {
            const skips = logger.entries.filter((e) => e.level === 'warn' && e.message.startsWith('Skipping invalid object')).length;
            if (skips !== rejected) problems.push(`${rejected} objects rejected but ${skips} skip warnings: ${showValue(logger.messages('warn'))}`);
          }
          if (problems.length > 0) throw new Error(`${problems.slice(0, 8).join('\n')}\ncluster: ${showValue(cluster)}`);
        }),
        { seed: SEED, numRuns: fuzzRuns(30), endOnFailure: true },
      );
    } catch (err) {
      (err as Error).message = `${replayHint(SEED)}\n${(err as Error).message}`;
      throw err;
    }
  }, 60_000);
});
