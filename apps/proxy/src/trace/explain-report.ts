import {
  compareWithKernel,
  explainService,
  formatExplanation,
  type IPFamily,
  type KernelObject,
  type KubeProxyConfiguration,
  type ModeTracer,
  type RuleSnapshot,
  type ServiceExplanation,
  type V1Node,
} from '@kube-proxy/core';
import type { ObjectStore } from './object-store.js';

/** explain of a Service the run does not hold: exit 1, or a 404 from /debug/explain. */
export class UnknownServiceError extends Error {
  override readonly name = 'UnknownServiceError';
}

/** A kernel object with the family whose rules hold it. */
export type FamilyKernelObject = KernelObject & { readonly family: IPFamily };

/** Where the kernel objects of an explanation come from. */
export interface KernelView {
  readonly mode: string;
  readonly tracer: ModeTracer;
  /** One snapshot per family the rules were found for. */
  readonly snapshots: ReadonlyMap<IPFamily, RuleSnapshot>;
}

/** `explain -o json` and /debug/explain: core's explanation, plus the mode's kernel objects. */
export interface ExplainReport extends ServiceExplanation {
  readonly kernel: {
    readonly mode: string;
    /** Where the objects were read (`--dry-run output`, `iptables-save`, …), by family. */
    readonly sources: Partial<Record<IPFamily, string>>;
    /** True when `objects` are what this host's kernel holds now; false: what the mode would program. */
    readonly live: boolean;
    readonly objects: readonly FamilyKernelObject[];
    /** With --live: what the mode would program for the objects the proxy sees (the --dry-run rules). */
    readonly expected?: readonly FamilyKernelObject[];
    /** With --live: how the kernel differs from what the objects say it should hold ([] = in agreement). */
    readonly differences?: readonly string[];
  };
}

export interface ExplainRequest {
  /** `namespace/name`. */
  readonly service: string;
  readonly objects: ObjectStore;
  readonly nodeName: string;
  readonly node: V1Node | undefined;
  /** The node's own addresses when known beyond the Node object (--node-address, or the host's with --live). */
  readonly nodeAddresses?: readonly string[];
  readonly nodeIPs: Partial<Record<IPFamily, string>>;
  readonly config: KubeProxyConfiguration;
  readonly families: readonly IPFamily[];
  /** The rules the mode would program (offline / --dry-run). */
  readonly expected?: KernelView;
  /** The host kernel's rules (--live, or a running proxy). */
  readonly live?: KernelView;
  /** Where the objects came from, for the unknown-Service message. */
  readonly objectSource: string;
}

function objectsOf(view: KernelView, service: string): FamilyKernelObject[] {
  const out: FamilyKernelObject[] = [];
  for (const [family, snapshot] of view.snapshots) {
    for (const o of view.tracer.objectsOf(snapshot, service)) out.push({ ...o, family });
  }
  return out;
}

function sourcesOf(view: KernelView): Partial<Record<IPFamily, string>> {
  return Object.fromEntries([...view.snapshots].map(([family, s]) => [family, s.source]));
}

export function buildExplainReport(req: ExplainRequest): ExplainReport {
  const service = req.objects.service(req.service);
  if (!service) throw new UnknownServiceError(`service ${req.service} not found in ${req.objectSource}`);
  const explanation = explainService({
    service,
    endpointSlices: req.objects.endpointSlices(),
    node: {
      name: req.nodeName,
      ...(req.node ? { object: req.node } : {}),
      ...(req.nodeAddresses ? { addresses: req.nodeAddresses } : {}),
      nodeIPs: req.nodeIPs,
    },
    config: req.config,
    families: req.families,
  });
  const view = req.live ?? req.expected;
  const objects = view ? objectsOf(view, req.service) : [];
  const kernel: ExplainReport['kernel'] = {
    mode: view?.mode ?? req.config.mode,
    sources: view ? sourcesOf(view) : {},
    live: req.live !== undefined,
    objects,
    ...(req.live && req.expected ? { expected: objectsOf(req.expected, req.service) } : {}),
    ...(req.live ? { differences: compareWithKernel(explanation, objects, { families: [...req.live.snapshots.keys()] }) } : {}),
  };
  return { ...explanation, kernel };
}

/**
 * The text output: where the kernel objects come from, then core's explanation as an operator reads
 * it (it lists the objects and the differences), and with --live what the objects say it should hold.
 */
export function formatExplainText(report: ExplainReport): string {
  const { kernel, ...explanation } = report;
  const where = Object.entries(kernel.sources)
    .map(([family, source]) => `${family} from ${source}`)
    .join(', ');
  const how = kernel.live ? "this host's kernel" : 'what the mode would program';
  const lines = [`Rules: ${kernel.mode} mode, ${how}${where ? ` (${where})` : ''}`, ''];
  const body = formatExplanation(explanation, kernel.objects, kernel.differences);
  lines.push(body.endsWith('\n') ? body.slice(0, -1) : body);
  // What the mode would program is worth reading beside the kernel only where they differ.
  if (kernel.expected && (kernel.differences?.length ?? 0) > 0) {
    lines.push('', 'What the mode would program for these objects:');
    lines.push(...(kernel.expected.length === 0 ? ['  (nothing)'] : kernel.expected.map(objectLine)));
  }
  return lines.join('\n') + '\n';
}

function objectLine(o: FamilyKernelObject): string {
  const to = o.endpoints && o.endpoints.length > 0 ? ` -> ${o.endpoints.join(', ')}` : '';
  return `  ${o.family} ${o.kind} ${o.name}: ${o.rules} rule${o.rules === 1 ? '' : 's'}${o.servicePort ? ` (${o.servicePort})` : ''}${to}`;
}
