/**
 * The IPVS mode's ModeTracer (core's packet-trace contract): snapshots from the host's tools
 * (readLive) or from our --dry-run block (fromDryRun), traced like the kernel (trace-ipvs.ts).
 */
import type { ModeTracer, RuleSnapshot } from '@kube-proxy/core';
import { ipvsSnapshotFromDryRun } from './ipvs-dry-run.js';
import { readIpvsLive } from './ipvs-live.js';
import { ipvsObjectsOf } from './ipvs-objects.js';
import { IPVS_TRACE_MODE, isIpvsSnapshot, type IpvsSnapshot } from './ipvs-snapshot.js';
import { traceIpvs } from './trace-ipvs.js';

function own(snapshot: RuleSnapshot): IpvsSnapshot {
  if (!isIpvsSnapshot(snapshot)) throw new Error(`the IPVS tracer cannot read a ${snapshot.mode} snapshot (${snapshot.source})`);
  return snapshot;
}

export const ipvsTracer: ModeTracer = {
  mode: IPVS_TRACE_MODE,
  readLive: readIpvsLive,
  fromDryRun: ipvsSnapshotFromDryRun,
  trace: (snapshot, packet, node) => traceIpvs(own(snapshot), packet, node),
  objectsOf: (snapshot, service) => ipvsObjectsOf(own(snapshot), service),
};
