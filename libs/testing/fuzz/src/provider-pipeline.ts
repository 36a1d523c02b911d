/**
 * Runs a fuzz cluster through what the proxy runs: validation (when given) → the iptables Provider
 * of each IP family (core's ProxyState, change trackers, topology, then the renderer) with fakes for
 * the host, exactly as the app wires it in --dry-run. Returns the first full-sync payload of each
 * family and everything that went wrong on the way, so properties can look at both.
 */
import type { EndpointSliceHandler, IPFamily, NodeHandler, ServiceHandler, V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';
import type { LogEntry } from '@kube-proxy/core/testing';
import type { RestoreOptions } from '@kube-proxy/netfilter-iptables';
import { DryRunIptables } from '@kube-proxy/netfilter-iptables';
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, testContext } from '@kube-proxy/core/testing';
import { validateEndpointSlice, validateNode, validateService } from '@kube-proxy/core';
import { IptablesProxier, type IptablesProxierStats } from '@kube-proxy/backend-iptables/internal';
import type { FuzzCluster, FuzzClusterChange } from './cluster-arbitrary.js';
import type { FuzzObject } from './fuzz-object.js';

/** A validation error, as core's validators report it (where, and what is wrong). */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** The three validators, as core exports them (validateService, validateEndpointSlice, validateNode). */
export interface ObjectValidator {
  service(svc: V1Service): readonly FieldError[];
  endpointSlice(slice: V1EndpointSlice): readonly FieldError[];
  node(node: V1Node): readonly FieldError[];
}

/** Core's validators: what the app puts in front of the Provider. */
export const CORE_VALIDATOR: ObjectValidator = { service: validateService, endpointSlice: validateEndpointSlice, node: validateNode };

export const FUZZ_NODE_IPS: Readonly<Record<IPFamily, string>> = { IPv4: '192.168.50.1', IPv6: 'fd00:192:168:50::1' };
export const FUZZ_CLUSTER_CIDRS = '10.244.0.0/16,fd00:10:244::/48';

/** A DryRunIptables that keeps every payload handed to restore and every restore failure. */
class RecordingIptables extends DryRunIptables {
  readonly payloads: string[] = [];
  readonly restoreErrors: string[] = [];

  /** Chunked restores go through restore(), so every payload is recorded (and overridable) as text. */
  override async restoreChunks(chunks: readonly Uint8Array[], options: RestoreOptions): Promise<void> {
    return this.restore(Buffer.concat(chunks).toString('latin1'), options);
  }

  override async restore(payload: string, options: RestoreOptions): Promise<void> {
    this.payloads.push(payload);
    try {
      await super.restore(payload, options);
    } catch (err) {
      this.restoreErrors.push(String((err as Error)?.message ?? err));
      throw err;
    }
  }
}

export interface FamilyRun {
  readonly family: IPFamily;
  /** The first (full) sync's payload, '' when no sync ran. */
  readonly payload: string;
  /** Restore failures of the in-memory iptables model (the dry-run parser) */
  readonly restoreErrors: readonly string[];
  readonly stats: IptablesProxierStats;
  /** Errors a handler call threw (there must be none). */
  readonly thrown: readonly string[];
  /** Log entries at level error. */
  readonly errorLogs: readonly LogEntry[];
  /** Every log entry at level warn (the validating layer reports skipped objects there). */
  readonly warnLogs: readonly LogEntry[];
}

export interface ObjectVerdict<T = unknown> {
  readonly input: FuzzObject<T>;
  /** Validation errors ([] = accepted; also [] without a validator). */
  readonly errors: readonly FieldError[];
  /** Whether the validator threw (it must not). */
  readonly threw?: string;
}

export interface PipelineRun {
  readonly node: ObjectVerdict;
  readonly services: readonly ObjectVerdict[];
  readonly slices: readonly ObjectVerdict[];
  readonly families: Readonly<Record<IPFamily, FamilyRun>>;
}

/** The three handler interfaces of a Provider, as a source delivers to them. */
export interface ProviderHandlers {
  readonly services: ServiceHandler;
  readonly endpointSlices: EndpointSliceHandler;
  readonly node: NodeHandler;
}

export interface PipelineOptions {
  /** Validation in front of the Provider; null sends every object, however hostile, straight in. */
  readonly validator: ObjectValidator | null;
  readonly families?: readonly IPFamily[];
  /**
   * The app's own validating layer around the Provider's handlers (e.g. apps/proxy's
   * ObjectValidation.wrap). When given, every object, valid or not, is delivered through it, and it
   * alone decides what reaches the Provider; `validator` then only labels the objects for checks.
   */
  readonly front?: (provider: ProviderHandlers) => ProviderHandlers;
}

function judge(input: FuzzObject<unknown>, validate: ((o: never) => readonly FieldError[]) | undefined): ObjectVerdict {
  if (validate === undefined) return { input, errors: [] };
  try {
    return { input, errors: validate(input.object as never) };
  } catch (err) {
    return { input, errors: [{ field: '', message: 'validator threw' }], threw: String((err as Error)?.stack ?? err) };
  }
}

/** Lets pending promise chains (and the fake-clock sync runner) run. */
async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** One IptablesProxier of `family` with fakes for the host, and what it did. */
class FamilyHarness {
  readonly logger = new RecordingLogger();
  readonly iptables: RecordingIptables;
  readonly clock = new FakeClock();
  readonly proxier: IptablesProxier;
  readonly thrown: string[] = [];
  private readonly loop: Promise<void>;

  constructor(readonly family: IPFamily) {
    this.iptables = new RecordingIptables(family);
    const context = testContext({
      nodeName: 'node-1',
      nodeIPs: { ...FUZZ_NODE_IPS },
      families: ['IPv4', 'IPv6'],
      dryRun: true,
      config: { clusterCIDR: FUZZ_CLUSTER_CIDRS },
    });
    this.proxier = new IptablesProxier({
      family,
      context,
      iptables: this.iptables,
      executor: new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'conntrack v1.4.7 (conntrack-tools): 0 flow entries have been deleted.\n' }),
      sysctl: new FakeSysctl({ 'net/ipv4/conf/all/route_localnet': '0', 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' }),
      clock: this.clock,
      logger: this.logger,
      dryRunTables: this.iptables.tables,
      networkInterfaces: () => ({}),
    });
    this.loop = this.proxier.syncLoop();
  }

  /** Calls a handler; what it throws is recorded, never propagated. */
  call(what: string, fn: (p: IptablesProxier) => void): void {
    try {
      fn(this.proxier);
    } catch (err) {
      this.thrown.push(`${what}: ${String((err as Error)?.stack ?? err)}`);
    }
  }

  /** Delivers the accepted objects and the synced signals. */
  addAll(node: ObjectVerdict, services: readonly ObjectVerdict[], slices: readonly ObjectVerdict[]): void {
    if (node.errors.length === 0) this.call('onNodeAdd', (p) => p.onNodeAdd(node.input.object as V1Node));
    this.call('onNodeSynced', (p) => p.onNodeSynced());
    for (const s of services) if (s.errors.length === 0) this.call('onServiceAdd', (p) => p.onServiceAdd(s.input.object as V1Service));
    for (const s of slices) if (s.errors.length === 0) this.call('onEndpointSliceAdd', (p) => p.onEndpointSliceAdd(s.input.object as V1EndpointSlice));
    this.call('onServicesSynced', (p) => p.onServicesSynced());
    this.call('onEndpointSlicesSynced', (p) => p.onEndpointSlicesSynced());
  }

  /** Delivers every object, whatever its verdict, through `front` (the app's validating layer). */
  addThrough(front: (provider: ProviderHandlers) => ProviderHandlers, node: ObjectVerdict, services: readonly ObjectVerdict[], slices: readonly ObjectVerdict[]): void {
    const p = this.proxier;
    let h: ProviderHandlers | undefined;
    this.call('front', () => (h = front({ services: p, endpointSlices: p, node: p })));
    if (h === undefined) return;
    const f = h;
    this.call('onNodeAdd', () => f.node.onNodeAdd(node.input.object as V1Node));
    this.call('onNodeSynced', () => f.node.onNodeSynced());
    for (const s of services) this.call('onServiceAdd', () => f.services.onServiceAdd(s.input.object as V1Service));
    for (const s of slices) this.call('onEndpointSliceAdd', () => f.endpointSlices.onEndpointSliceAdd(s.input.object as V1EndpointSlice));
    this.call('onServicesSynced', () => f.services.onServicesSynced());
    this.call('onEndpointSlicesSynced', () => f.endpointSlices.onEndpointSlicesSynced());
  }

  /** Waits (moving the fake clock past the minimum sync interval) until `count` restores happened. */
  async syncs(count: number): Promise<void> {
    for (let i = 0; i < 40 && this.iptables.payloads.length < count && this.proxier.stats.failedSyncs === 0; i++) {
      await settle();
      if (this.iptables.payloads.length < count) this.clock.advance(250);
    }
  }

  async stop(): Promise<void> {
    this.proxier.stop();
    await this.loop.catch((err: unknown) => this.thrown.push(`syncLoop: ${String((err as Error)?.stack ?? err)}`));
    await this.proxier.firstSync().catch(() => undefined);
  }

  result(payloadIndex = 0): FamilyRun {
    return {
      family: this.family,
      payload: this.iptables.payloads[payloadIndex] ?? '',
      restoreErrors: this.iptables.restoreErrors,
      stats: { ...this.proxier.stats },
      thrown: this.thrown,
      errorLogs: this.logger.entries.filter((e) => e.level === 'error'),
      warnLogs: this.logger.entries.filter((e) => e.level === 'warn'),
    };
  }
}

async function runFamily(family: IPFamily, node: ObjectVerdict, services: readonly ObjectVerdict[], slices: readonly ObjectVerdict[], front?: PipelineOptions['front']): Promise<FamilyRun> {
  const h = new FamilyHarness(family);
  if (front) h.addThrough(front, node, services, slices);
  else h.addAll(node, services, slices);
  await h.syncs(1);
  await h.stop();
  return h.result();
}

/** Validates every object of `cluster`, then feeds the accepted ones to one Provider per family. */
export async function runPipeline(cluster: FuzzCluster, opts: PipelineOptions): Promise<PipelineRun> {
  const v = opts.validator;
  const node = judge(cluster.node, v ? (o) => v.node(o) : undefined);
  const services = cluster.services.map((s) => judge(s, v ? (o) => v.service(o) : undefined));
  const slices = cluster.slices.map((s) => judge(s, v ? (o) => v.endpointSlice(o) : undefined));
  const families = opts.families ?? ['IPv4', 'IPv6'];
  const runs: Partial<Record<IPFamily, FamilyRun>> = {};
  for (const family of families) runs[family] = await runFamily(family, node, services, slices, opts.front);
  return { node, services, slices, families: runs as Record<IPFamily, FamilyRun> };
}

/** What a change round did to one family's Provider. */
export interface ChangeRun {
  /** The first (full) sync, then the sync after the changes. */
  readonly first: FamilyRun;
  readonly second: FamilyRun;
  /** iptables-save of the tables after the second sync. */
  readonly incremental: string;
  /** iptables-save of a fresh Provider whose first sync sees the `after` objects. */
  readonly fresh: string;
}

/** Namespaced key of an object of one kind, or undefined for objects without usable metadata. */
function objectKey(o: unknown): string | undefined {
  const meta = (o as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  return typeof meta?.name === 'string' ? `${String(meta.namespace)}/${meta.name}` : undefined;
}

function byKey(verdicts: readonly ObjectVerdict[]): Map<string, ObjectVerdict> {
  const m = new Map<string, ObjectVerdict>();
  for (const v of verdicts) {
    const k = v.errors.length === 0 ? objectKey(v.input.object) : undefined;
    if (k !== undefined) m.set(k, v);
  }
  return m;
}

/** Deletes, updates and adds (as informers deliver them) the accepted objects that changed. */
function deliverChanges<T>(
  h: FamilyHarness,
  before: readonly ObjectVerdict[],
  after: readonly ObjectVerdict[],
  on: { add: (p: IptablesProxier, o: T) => void; update: (p: IptablesProxier, a: T, b: T) => void; del: (p: IptablesProxier, o: T) => void },
): void {
  const old = byKey(before);
  const now = byKey(after);
  for (const [k, v] of old) if (!now.has(k)) h.call('delete', (p) => on.del(p, v.input.object as T));
  for (const [k, v] of now) {
    const prev = old.get(k);
    if (prev === undefined) h.call('add', (p) => on.add(p, v.input.object as T));
    else if (prev.input.object !== v.input.object) h.call('update', (p) => on.update(p, prev.input.object as T, v.input.object as T));
  }
}

/**
 * The change trackers under fuzz: `change.before` is synced, then the differences to `change.after`
 * are delivered as deletes, updates and adds, and the next (partial) sync must leave the tables
 * exactly as a fresh Provider's first sync of `change.after` does.
 */
export async function runChange(change: FuzzClusterChange, validator: ObjectValidator, families: readonly IPFamily[] = ['IPv4', 'IPv6']): Promise<Record<IPFamily, ChangeRun>> {
  const judgeAll = (c: FuzzCluster) => ({
    node: judge(c.node, (o) => validator.node(o)),
    services: c.services.map((s) => judge(s, (o) => validator.service(o))),
    slices: c.slices.map((s) => judge(s, (o) => validator.endpointSlice(o))),
  });
  const b = judgeAll(change.before);
  const a = judgeAll(change.after);
  const out: Partial<Record<IPFamily, ChangeRun>> = {};
  for (const family of families) {
    const h = new FamilyHarness(family);
    h.addAll(b.node, b.services, b.slices);
    await h.syncs(1);
    const first = h.result(0);
    if (a.node.errors.length === 0 && a.node.input.object !== b.node.input.object) {
      h.call('onNodeUpdate', (p) => p.onNodeUpdate(b.node.input.object as V1Node, a.node.input.object as V1Node));
    }
    deliverChanges<V1Service>(h, b.services, a.services, {
      add: (p, o) => p.onServiceAdd(o),
      update: (p, x, y) => p.onServiceUpdate(x, y),
      del: (p, o) => p.onServiceDelete(o),
    });
    deliverChanges<V1EndpointSlice>(h, b.slices, a.slices, {
      add: (p, o) => p.onEndpointSliceAdd(o),
      update: (p, x, y) => p.onEndpointSliceUpdate(x, y),
      del: (p, o) => p.onEndpointSliceDelete(o),
    });
    await h.syncs(2);
    const incremental = h.iptables.tables.saveAll();
    await h.stop();
    const second = h.result(1);
    const f = new FamilyHarness(family);
    f.addAll(a.node, a.services, a.slices);
    await f.syncs(1);
    const fresh = f.iptables.tables.saveAll();
    await f.stop();
    out[family] = { first, second, incremental, fresh };
  }
  return out as Record<IPFamily, ChangeRun>;
}
