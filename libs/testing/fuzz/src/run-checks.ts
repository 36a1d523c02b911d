/**
 * The properties of one pipeline run, as lists of problems (empty = the property holds), shared by
 * the unit properties here and in apps/proxy: nothing threw, every sync succeeded and its payload is
 * well-formed; behind validation also that the validator agreed with the generator, that no address
 * of a rejected object reached a rule, and that every usable valid Service port is in the rules.
 */
import { BAD_POOL_ADDRESS } from './addresses.js';
import { payloadProblems } from './payload-checks.js';
import { expectedServicePorts, missingFromPayload } from './presence-oracle.js';
import type { PipelineRun } from './provider-pipeline.js';

/** JSON for failure messages, clipped; `undefined` shown as such. */
export function showValue(o: unknown, max = 2000): string {
  return JSON.stringify(o, (_k, v: unknown) => (v === undefined ? '<undefined>' : v))?.slice(0, max) ?? String(o);
}

/** Throws, failed restores or syncs, missing syncs, malformed payload lines. */
export function runProblems(run: PipelineRun): string[] {
  const out: string[] = [];
  for (const v of [run.node, ...run.services, ...run.slices]) if (v.threw) out.push(`validator threw on ${showValue(v.input.object)}: ${v.threw}`);
  for (const f of Object.values(run.families)) {
    out.push(...f.thrown.map((t) => `${f.family}: handler threw: ${t}`));
    out.push(...f.restoreErrors.map((e) => `${f.family}: restore of the payload failed: ${e}`));
    if (f.stats.failedSyncs > 0) out.push(`${f.family}: ${f.stats.failedSyncs} failed syncs: ${showValue(f.errorLogs)}`);
    if (f.payload === '') out.push(`${f.family}: no sync ran`);
    out.push(...payloadProblems(f.payload).map((p) => `${f.family}: ${p}`));
  }
  return out;
}

/** runProblems, plus what must hold behind validation: verdicts, nothing rejected in the rules, valid ports present. */
export function validatedRunProblems(run: PipelineRun): string[] {
  const out = runProblems(run);
  for (const v of [run.node, ...run.services, ...run.slices]) {
    if (v.input.valid && v.errors.length > 0) out.push(`valid object rejected: ${showValue(v.errors)} for ${showValue(v.input.object)}`);
    if (!v.input.valid && v.errors.length === 0) out.push(`invalid object (${v.input.mutation}) accepted: ${showValue(v.input.object)}`);
  }
  for (const f of Object.values(run.families)) {
    const leaked = BAD_POOL_ADDRESS.exec(f.payload);
    if (leaked) out.push(`${f.family}: an address of a rejected object reached the rules near ${showValue(f.payload.slice(leaked.index, leaked.index + 200))}`);
    for (const e of expectedServicePorts(run, f.family)) {
      const why = missingFromPayload(f.payload, e);
      if (why !== undefined) out.push(`${f.family}: ${why}`);
    }
  }
  return out;
}
