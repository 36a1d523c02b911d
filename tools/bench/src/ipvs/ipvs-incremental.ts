/**
 * The IPVS proxier's incremental sync, timed on the host as the proxier runs it (issue 24, item 2):
 *  - index build: IpvsStateIndex.build over the trackers' maps + materialize() (a full sync's state);
 *  - one-endpoint change: the trackers drained, changedServicePorts, the changed ports rebuilt in the
 *    index, takeChange, partialBatches (set entries, the touched virtual servers' kernel target and
 *    ipvsadm batch, kube-ipvs0 changes): everything a partial sync computes before the kernel tools
 *    run (median of `rounds`, the endpoint moved back and forth);
 *  - repair sync: the kernel's `ipvsadm --save -n` and `ipset save` texts (as the in-memory kernel
 *    prints them after the full batches) parsed, the whole desired state materialized, the kernel
 *    target and both full diffs: the compute of the periodic read-back, without the tools' own time.
 */
import { AppliedIpvs, changedServicePorts, diffDesiredStates, IpvsStateIndex, kernelTarget, MemoryIpvsKernel, parseIpsetSave, parseIpvsadmSave, partialBatches, type DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';
import { lineCount, median, ms, STATE_OPTIONS, type FullSync, type IpvsPayloads } from './ipvs-workload.js';
import { sliceOf } from '../common/scale-cluster.js';

export interface IncrementalChange {
  /** IpvsStateIndex.build + materialize over the maps (the index a full sync builds). */
  readonly indexBuildMs: number;
  /** Median over the rounds: trackers + ports + index + batches. */
  readonly computeMs: number;
  readonly trackersMs: number;
  /** changedServicePorts + the index update + takeChange. */
  readonly indexMs: number;
  readonly batchesMs: number;
  readonly everyRoundMs: readonly number[];
  readonly payloads: IpvsPayloads;
}

export interface RepairCost {
  readonly parseMs: number;
  readonly materializeMs: number;
  readonly diffMs: number;
  readonly totalMs: number;
  /** Bytes of the read-back texts parsed. */
  readonly readBackBytes: number;
}

const NO_CONNECTIONS = async () => new Map();

/** Builds the index and the applied view as a first sync leaves them, then times `rounds` one-endpoint changes. */
export async function measureIncrementalChange(full: FullSync, endpoints: number, rounds = 5): Promise<{ change: IncrementalChange; index: IpvsStateIndex; applied: AppliedIpvs }> {
  const state = full.proxyState;
  const t0 = process.hrtime.bigint();
  const index = IpvsStateIndex.build(state.serviceMap, state.endpointsMap, STATE_OPTIONS);
  const desired = index.materialize();
  const indexBuildMs = ms(t0);
  const applied = new AppliedIpvs('IPv4');
  applied.replaceAll(await kernelTarget({ desired: desired.virtualServers, current: [], excludeCIDRs: [], connections: NO_CONNECTIONS }));

  // Service 1's endpoints move back and forth (service 0 is the full-rebuild measurement's).
  const slices = [full.slices[1] ?? full.slices[0], sliceOf(full.slices[1] ? 1 : 0, endpoints, 1)];
  const times: Array<{ total: number; trackers: number; index: number; batches: number }> = [];
  let payloads: IpvsPayloads = { ipvsadm: '', ipset: '', address: '' };
  for (let r = 0; r < rounds; r++) {
    const [from, to] = r % 2 === 0 ? [slices[0], slices[1]] : [slices[1], slices[0]];
    state.onEndpointSliceUpdate(from as never, to as never);
    const t = process.hrtime.bigint();
    const appliedChanges = state.applyPendingChanges();
    const t1 = process.hrtime.bigint();
    for (const port of changedServicePorts(appliedChanges, state.serviceMap, index)) index.update(port, state.serviceMap, state.endpointsMap);
    const change = index.takeChange();
    const t2 = process.hrtime.bigint();
    const batches = await partialBatches(index, change, applied, [], NO_CONNECTIONS);
    const t3 = process.hrtime.bigint();
    applied.commit(batches.ipvs);
    const d = (a: bigint, b: bigint): number => Number(b - a) / 1e6;
    times.push({ total: d(t, t3), trackers: d(t, t1), index: d(t1, t2), batches: d(t2, t3) });
    payloads = { ipvsadm: batches.ipvs.batch, ipset: batches.ipset, address: [...batches.bind, ...batches.unbind].join('\n') };
    if (lineCount(batches.ipvs.batch) !== 2 || lineCount(batches.ipset) > 2 || batches.bind.length + batches.unbind.length !== 0) {
      throw new Error(`one moved endpoint should be 2 ipvsadm lines and at most 2 ipset lines, got:\n${batches.ipvs.batch}${batches.ipset}`);
    }
  }
  const mid = [...times].sort((a, b) => a.total - b.total)[Math.floor(times.length / 2)] as (typeof times)[number];
  const change: IncrementalChange = { indexBuildMs, computeMs: mid.total, trackersMs: mid.trackers, indexMs: mid.index, batchesMs: mid.batches, everyRoundMs: times.map((t) => t.total), payloads };
  return { change, index, applied };
}

/** The compute of one repair sync over a kernel that holds `state` (median of 3). */
export async function measureRepair(index: IpvsStateIndex, payloads: IpvsPayloads): Promise<RepairCost> {
  const kernel = new MemoryIpvsKernel();
  await kernel.applyIpset(payloads.ipset);
  await kernel.applyIpvsadm(payloads.ipvsadm);
  const dump = kernel.dump('IPv4');
  const runs: RepairCost[] = [];
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    const current = parseIpvsadmSave(dump.ipvs, 'IPv4');
    const sets = parseIpsetSave(dump.ipset);
    const t1 = process.hrtime.bigint();
    const desired = index.materialize();
    const t2 = process.hrtime.bigint();
    const target = await kernelTarget({ desired: desired.virtualServers, current, excludeCIDRs: [], connections: NO_CONNECTIONS });
    const kernelState: DesiredIpvsState = { family: 'IPv4', virtualServers: current, bindAddresses: [], ipsets: desired.ipsets.map(({ set }) => ({ set, entries: sets.get(set.name) ?? [] })) };
    const diff = diffDesiredStates(kernelState, { ...desired, virtualServers: target.virtualServers });
    const t3 = process.hrtime.bigint();
    if (diff.ipvsadm !== '' || diff.ipset !== '') throw new Error(`a repair over an unchanged kernel should write nothing, got:\n${diff.ipvsadm.slice(0, 500)}${diff.ipset.slice(0, 500)}`);
    const d = (a: bigint, b: bigint): number => Number(b - a) / 1e6;
    runs.push({ parseMs: d(t, t1), materializeMs: d(t1, t2), diffMs: d(t2, t3), totalMs: d(t, t3), readBackBytes: Buffer.byteLength(dump.ipvs) + Buffer.byteLength(dump.ipset) });
  }
  const m = median(runs.map((r) => r.totalMs));
  return runs.find((r) => r.totalMs === m) as RepairCost;
}
