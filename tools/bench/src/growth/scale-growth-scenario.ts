/**
 * One size of the scale-growth benchmark: the startup phases (scale-growth-phases.ts) run in order
 * on one cluster, each measured on its own (phase-meter.ts), each keeping what the proxy keeps, so
 * a phase's memory delta is what it adds to a running proxy's footprint.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import type { ApiLists } from './growth-cluster.js';
import type { PhaseSample, ScenarioRun } from './growth-ratios.js';
import { RestoreNamespace } from '../common/netns-restore.js';
import { measurePhase, skippedPhase } from './phase-meter.js';
import type { ProxySourceModules } from '../common/proxy-source-modules.js';
import { decodeList, finishSync, natRuleLines, runApply, runRender, runSourceHandlers, runStateHandlers, type Rendered } from './scale-growth-phases.js';

export const PHASES = ['decode', 'handlers: source', 'handlers: ProxyState', 'trackers', 'render', 'apply'] as const;

export type ApplyPlan = { readonly run: true; readonly namespace: string } | { readonly run: false; readonly reason: string };

export interface ScenarioResult extends ScenarioRun {
  readonly unitName: 'Service' | 'endpoint';
  readonly services: number;
  readonly slices: number;
  readonly endpoints: number;
  readonly inputBytes: number;
  readonly payloadBytes: number;
  readonly payloadLines: number;
  readonly natRules: number;
  /** `-A` lines iptables-legacy-save showed in the nat table after the restore (undefined: not applied). */
  readonly kernelNatRules?: number;
  /** With several runs: every run's wall time per phase (ms), in phase order. */
  readonly runWalls?: readonly (readonly number[])[];
}

/**
 * What each phase produced, reachable until the scenario ends as it would be in a running proxy
 * (a module-level list, so no engine liveness analysis can free it early).
 */
const held: unknown[] = [];

function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

export async function runScenario(label: string, unitName: 'Service' | 'endpoint', lists: ApiLists, source: ProxySourceModules, apply: ApplyPlan): Promise<ScenarioResult> {
  const phases: PhaseSample[] = [];
  const step = async <T>(phase: string, run: () => T | Promise<T>): Promise<T> => {
    const { value, sample } = await measurePhase(phase, run);
    phases.push(sample);
    held.push(value);
    return value;
  };

  const decoded = await step('decode', () => ({
    services: decodeList<V1Service>(lists.services, source),
    slices: decodeList<V1EndpointSlice>(lists.slices, source),
  }));
  const sourceSide = await step('handlers: source', () => runSourceHandlers(source, decoded.services, decoded.slices));
  const state = await step('handlers: ProxyState', () => runStateHandlers(sourceSide.calls));
  await step('trackers', () => state.applyPendingChanges());
  if (state.serviceMap.size !== lists.serviceCount) throw new Error(`service map holds ${state.serviceMap.size} ports, expected ${lists.serviceCount}`);

  let rendered: Rendered | undefined = await step('render', () => runRender(state));
  if (rendered.result.totalEndpoints !== lists.endpointCount) throw new Error(`rendered ${rendered.result.totalEndpoints} endpoints, expected ${lists.endpointCount}`);
  const payloadBytes = rendered.payload.length; // latin1 text: one byte per character
  const payloadLines = lineCount(rendered.payload);
  const natRules = natRuleLines(rendered.payload);

  let kernelNatRules: number | undefined;
  if (apply.run) {
    const ns = await RestoreNamespace.create(apply.namespace, 'legacy');
    try {
      // The proxier keeps its chain-name cache and memo after the sync; the payload and result go.
      await step('apply', async () => {
        const r = rendered!;
        rendered = undefined;
        held.splice(held.indexOf(r), 1);
        await runApply(r, ns);
        return { names: r.names, memo: r.memo };
      });
      // Counted without a RegExp: V8 keeps the last RegExp input alive (RegExp.input), and this one is
      // tens of MB that the next size's first RegExp would free inside one of its phases.
      kernelNatRules = natRuleLines(await ns.save('nat'));
    } finally {
      await ns.destroy();
    }
    if (kernelNatRules !== natRules) throw new Error(`the kernel's nat table has ${kernelNatRules} rules after the restore, the payload ${natRules}`);
  } else {
    finishSync(rendered);
    held.splice(held.indexOf(rendered), 1);
    held.push({ names: rendered.names, memo: rendered.memo });
    rendered = undefined;
    phases.push(skippedPhase('apply', apply.reason));
  }
  held.length = 0;

  return {
    label,
    unitName,
    units: unitName === 'Service' ? lists.serviceCount : lists.endpointCount,
    phases,
    services: lists.serviceCount,
    slices: lists.sliceCount,
    endpoints: lists.endpointCount,
    inputBytes: lists.services.length + lists.slices.length,
    payloadBytes,
    payloadLines,
    natRules,
    ...(kernelNatRules !== undefined ? { kernelNatRules } : {}),
  };
}
