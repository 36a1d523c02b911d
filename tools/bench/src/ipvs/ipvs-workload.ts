/**
 * The CPU side of one IPVS full sync, timed, for N services × E endpoints (scale-cluster.ts):
 *  - trackers: Services and EndpointSlices through core's change trackers (ProxyState) into the
 *    service and endpoints maps, once, as a proxier's first sync does;
 *  - state: buildDesiredIpvsState over those maps (median of 3 after a warm-up: a running
 *    proxier's full sync is warm);
 *  - batches: renderIpvsadmRestore + renderIpsetRestore + the kube-ipvs0 `ip -batch` text of the
 *    whole state (median of 3 after a warm-up);
 * and the one-endpoint change a running node sees most: one endpoint of one service moves, the
 * state is rebuilt and diffDesiredStates gives the batches. The host benchmark runs this, and so
 * does the guest (ipvs-guest-apply.ts) as its emulation yardstick: the same work on both sides.
 */
import { ProxyState, nullLogger } from '@kube-proxy/core';
import { buildDesiredIpvsState, diffDesiredStates, renderIpsetRestore, renderIpvsadmRestore, type DesiredIpvsState, type IpvsStateOptions } from '@kube-proxy/backend-ipvs/internal';
import { addressDiff, renderAddressBatch } from './ipvs-address-batch.js';
import { scaleCluster, sliceOf, type ScaleCluster } from '../common/scale-cluster.js';

export const ENDPOINTS_PER_SERVICE = 5;

const NODE_IP = '192.168.0.10';

export const STATE_OPTIONS: IpvsStateOptions = {
  family: 'IPv4',
  nodeName: 'node-0',
  nodeLabels: {},
  nodeIP: NODE_IP,
  nodePortAddresses: { all: true },
  localAddresses: [NODE_IP],
};

/** The three restore inputs of one sync. */
export interface IpvsPayloads {
  readonly ipvsadm: string;
  readonly ipset: string;
  /** `ip -batch -` input for kube-ipvs0. */
  readonly address: string;
}

export interface FullSyncTimings {
  readonly trackersMs: number;
  readonly stateMs: number;
  readonly batchMs: number;
}

export interface FullSync extends FullSyncTimings {
  readonly n: number;
  readonly state: DesiredIpvsState;
  readonly payloads: IpvsPayloads;
  /** The trackers holding the cluster, for the one-endpoint change. */
  readonly proxyState: ProxyState;
  readonly slices: ScaleCluster['slices'];
}

export interface EndpointChange {
  /** applyPendingChanges + buildDesiredIpvsState + diffDesiredStates + the address diff. */
  readonly computeMs: number;
  /** Its parts: the trackers, the state rebuild, the two diffs. */
  readonly trackersMs: number;
  readonly stateMs: number;
  readonly diffMs: number;
  readonly after: DesiredIpvsState;
  readonly payloads: IpvsPayloads;
}

export const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
export function median(xs: readonly number[]): number {
  return medianBy(xs, (x) => x);
}

/** The item whose `key` is the median (the upper one of an even count): a whole run, not a mix of runs. */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  const m = [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)];
  if (m === undefined) throw new RangeError('median of nothing');
  return m;
}

export const fullSyncMs = (t: FullSyncTimings): number => t.trackersMs + t.stateMs + t.batchMs;
/** Lines of a newline-terminated batch ("" has none). */
export const lineCount = (text: string): number => (text === '' ? 0 : text.split('\n').length - 1);

function fullPayloads(state: DesiredIpvsState): IpvsPayloads {
  return {
    ipvsadm: renderIpvsadmRestore(state),
    ipset: renderIpsetRestore(state),
    address: renderAddressBatch({ createLink: true, add: state.bindAddresses, remove: [] }),
  };
}

/** Warm-up run, then the median of 3 timed runs; returns the last result. */
function warmMedian<T>(f: () => T): { value: T; ms: number } {
  let value = f();
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = process.hrtime.bigint();
    value = f();
    times.push(ms(t));
  }
  return { value, ms: median(times) };
}

/** `cluster` defaults to a fresh scaleCluster(n); pass one to time several runs on the same objects. */
export function measureFullSync(n: number, cluster: ScaleCluster = scaleCluster(n, ENDPOINTS_PER_SERVICE)): FullSync {
  const t = process.hrtime.bigint();
  const proxyState = new ProxyState({ family: 'IPv4', nodeName: STATE_OPTIONS.nodeName, logger: nullLogger, onChange: () => undefined });
  for (const s of cluster.services) proxyState.onServiceAdd(s);
  for (const s of cluster.slices) proxyState.onEndpointSliceAdd(s);
  proxyState.onServicesSynced();
  proxyState.onEndpointSlicesSynced();
  proxyState.applyPendingChanges();
  const trackersMs = ms(t);

  const state = warmMedian(() => buildDesiredIpvsState(proxyState.serviceMap, proxyState.endpointsMap, STATE_OPTIONS));
  if (state.value.virtualServers.length !== n) throw new Error(`expected ${n} virtual servers, built ${state.value.virtualServers.length}`);
  const batches = warmMedian(() => fullPayloads(state.value));
  return { n, trackersMs, stateMs: state.ms, batchMs: batches.ms, state: state.value, payloads: batches.value, proxyState, slices: cluster.slices };
}

/** Moves the first endpoint of service 0 and computes the batches that carry the kernel there. */
export function measureEndpointChange(full: FullSync, endpoints = ENDPOINTS_PER_SERVICE): EndpointChange {
  const before = full.slices[0];
  if (before === undefined) throw new RangeError('the one-endpoint change needs at least one service');
  full.proxyState.onEndpointSliceUpdate(before, sliceOf(0, endpoints, 1));
  const t = process.hrtime.bigint();
  full.proxyState.applyPendingChanges();
  const t1 = process.hrtime.bigint();
  const after = buildDesiredIpvsState(full.proxyState.serviceMap, full.proxyState.endpointsMap, STATE_OPTIONS);
  const t2 = process.hrtime.bigint();
  const diff = diffDesiredStates(full.state, after);
  const address = renderAddressBatch(addressDiff(full.state.bindAddresses, after.bindAddresses));
  const computeMs = ms(t);
  const trackersMs = Number(t1 - t) / 1e6;
  const stateMs = Number(t2 - t1) / 1e6;
  // One real server out, one in; at most its hairpin entry (KUBE-LOOP-BACK) out and in when the
  // endpoint is on this node, as scale-cluster puts it; the service's address stays bound.
  if (lineCount(diff.ipvsadm) !== 2 || lineCount(diff.ipset) > 2 || address !== '') {
    throw new Error(`one moved endpoint should be 2 ipvsadm lines and at most 2 ipset lines, got:\n${diff.ipvsadm}${diff.ipset}${address}`);
  }
  return { computeMs, trackersMs, stateMs, diffMs: computeMs - trackersMs - stateMs, after, payloads: { ipvsadm: diff.ipvsadm, ipset: diff.ipset, address } };
}
