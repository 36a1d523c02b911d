/**
 * A seeded, reproducible sample of rendered payloads for the real-kernel suite: `count` fuzz clusters,
 * each rendered for IPv4 and IPv6, either behind core's validation or with validation bypassed (raw
 * hostile objects straight into the Provider and renderer).
 */
import fc from 'fast-check';
import type { IPFamily } from '@kube-proxy/core';
import { fuzzCluster, type ClusterOptions } from './cluster-arbitrary.js';
import { payloadProblems } from './payload-checks.js';
import { CORE_VALIDATOR, runPipeline } from './provider-pipeline.js';

export interface SampledPayload {
  /** `<seed>/<validated|raw>/<cluster index>/<family>`: enough to find and replay it. */
  readonly id: string;
  readonly family: IPFamily;
  readonly validated: boolean;
  readonly payload: string;
  /** Problems found before the kernel saw it: throws, restore failures of the model, malformed lines. */
  readonly problems: readonly string[];
}

export interface SampleOptions {
  readonly seed: number;
  readonly count: number;
  /** false: every object goes straight into the Provider, however hostile. */
  readonly validated: boolean;
  readonly cluster?: ClusterOptions;
}

export async function samplePayloads(opts: SampleOptions): Promise<SampledPayload[]> {
  // Different streams for the two kinds, so adding raw samples never changes the validated ones.
  const seed = opts.validated ? opts.seed : opts.seed ^ 0x5a5a5a5a;
  const clusters = fc.sample(fuzzCluster(opts.cluster), { seed, numRuns: opts.count });
  const out: SampledPayload[] = [];
  for (const [i, cluster] of clusters.entries()) {
    const run = await runPipeline(cluster, { validator: opts.validated ? CORE_VALIDATOR : null });
    for (const f of Object.values(run.families)) {
      const problems = [...f.thrown, ...f.restoreErrors.map((e) => `model restore failed: ${e}`), ...payloadProblems(f.payload)];
      if (f.payload === '') problems.push('no sync ran');
      out.push({ id: `${opts.seed}/${opts.validated ? 'validated' : 'raw'}/${i}/${f.family}`, family: f.family, validated: opts.validated, payload: f.payload, problems });
    }
  }
  return out;
}
