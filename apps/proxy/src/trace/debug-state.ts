import {
  isNoRulesFound,
  type BackendPlugin,
  type CommandExecutor,
  type IPFamily,
  type KubeProxyConfiguration,
  type RuleSnapshot,
  type TextSink,
} from '@kube-proxy/core';
import { DryRunRecorder } from './dry-run-blocks.js';
import { buildExplainReport, type ExplainReport, type KernelView } from './explain-report.js';
import { hostAddresses, nodeObjectAddresses } from './node-addresses.js';
import { ObjectStore } from './object-store.js';
import { traceOver, type TraceAnswer } from './run-trace.js';
import { TraceInputError, buildTracePacket, familyOfDestination, type PacketInput } from './trace-packet.js';

/** The running proxy has no rules to trace over yet (before its first sync): a 503. */
export class NoRulesYetError extends Error {
  override readonly name = 'NoRulesYetError';
}

export interface DebugStateOptions {
  readonly plugin: BackendPlugin;
  readonly config: KubeProxyConfiguration;
  readonly nodeName: string;
  readonly families: readonly IPFamily[];
  readonly executor: CommandExecutor;
  readonly dryRun: boolean;
  /** The node's primary IP per family, as the proxier was given it. */
  readonly nodeIPs?: Partial<Record<IPFamily, string>>;
  /** Test seam: the node's own addresses (default: the host's, or the Node object's in --dry-run). */
  readonly nodeAddresses?: () => Promise<string[]>;
}

/**
 * What a running proxy answers /debug/trace and /debug/explain from: the objects it holds now (fed
 * beside its proxier) and its mode's rules — its kernel's (read-only), or in --dry-run the last block
 * it printed.
 */
export class DebugState {
  readonly objects = new ObjectStore();
  private readonly recorder: DryRunRecorder;

  constructor(private readonly opts: DebugStateOptions) {
    this.recorder = new DryRunRecorder(opts.families);
  }

  /** The --dry-run sink, recording each family's last block on its way to `inner`. */
  recordingSink(inner: TextSink): TextSink {
    return this.recorder.wrap(inner);
  }

  async trace(request: PacketInput): Promise<TraceAnswer> {
    const family = familyOfDestination(request.to);
    if (!request.to) throw new TraceInputError('to=IP:PORT is required (the destination)');
    if (!family) throw new TraceInputError(`malformed to ${JSON.stringify(request.to)}: want IP:PORT ([IPv6]:PORT) with a port in 1-65535`);
    // The rest of the request is checked before any rule is read.
    buildTracePacket(request, []);
    const tracer = this.tracer();
    const snapshot = await this.snapshot(family);
    const addresses = await this.nodeAddresses();
    return traceOver(this.opts.plugin.name, tracer, snapshot, request, { name: this.opts.nodeName, addresses });
  }

  async explain(service: string): Promise<ExplainReport> {
    const tracer = this.opts.plugin.tracer;
    const snapshots = new Map<IPFamily, RuleSnapshot>();
    if (tracer) {
      for (const family of this.opts.families) {
        const s = await this.snapshot(family).catch((err: unknown) => (err instanceof NoRulesYetError ? undefined : Promise.reject(err)));
        if (s) snapshots.set(family, s);
      }
    }
    const view: KernelView | undefined = tracer ? { mode: this.opts.plugin.name, tracer, snapshots } : undefined;
    return buildExplainReport({
      service,
      objects: this.objects,
      nodeName: this.opts.nodeName,
      node: this.objects.node(),
      nodeAddresses: await this.nodeAddresses(),
      nodeIPs: this.opts.nodeIPs ?? {},
      config: { ...this.opts.config, mode: this.opts.plugin.name },
      families: this.opts.families,
      ...(view ? (this.opts.dryRun ? { expected: view } : { live: view }) : {}),
      objectSource: "this proxy's objects",
    });
  }

  private tracer() {
    const { tracer } = this.opts.plugin;
    if (!tracer) throw new TraceInputError(`proxy mode "${this.opts.plugin.name}" cannot trace packets (its backend has no tracer)`);
    return tracer;
  }

  private async snapshot(family: IPFamily): Promise<RuleSnapshot> {
    const tracer = this.tracer();
    if (!this.opts.families.includes(family)) throw new TraceInputError(`this proxy does not serve ${family} (it serves ${this.opts.families.join(', ')})`);
    if (this.opts.dryRun) {
      const block = this.recorder.lastBlock(family);
      if (block === undefined) throw new NoRulesYetError(`no ${family} rules written yet (the first sync has not finished)`);
      return tracer.fromDryRun(block, family);
    }
    const read = await tracer.readLive(this.opts.executor, family);
    if (isNoRulesFound(read)) throw new NoRulesYetError(`no ${this.opts.plugin.name} rules in the kernel for ${family}: looked for ${read.lookedFor}`);
    return read;
  }

  private nodeAddresses(): Promise<string[]> {
    if (this.opts.nodeAddresses) return this.opts.nodeAddresses();
    if (this.opts.dryRun) return Promise.resolve(nodeObjectAddresses(this.objects.node()));
    return hostAddresses(this.opts.executor);
  }
}
