/**
 * The userspace mode's ModeTracer (core's packet-trace contract): capture rules from the kernel
 * (readLive: endpoints unknown, they live in the proxy) or from our --dry-run block (fromDryRun:
 * with the proxy-socket table, so with endpoints; the running proxy's /debug/trace uses this).
 */
import type { ModeTracer, RuleSnapshot } from '@kube-proxy/core';
import { traceUserspace } from './trace-userspace.js';
import { readUserspaceLive } from './userspace-live.js';
import { userspaceObjectsOf } from './userspace-objects.js';
import { isUserspaceSnapshot, USERSPACE_TRACE_MODE, userspaceSnapshotFromDryRun, type UserspaceSnapshot } from './userspace-snapshot.js';

function own(snapshot: RuleSnapshot): UserspaceSnapshot {
  if (!isUserspaceSnapshot(snapshot)) throw new Error(`the userspace tracer cannot read a ${snapshot.mode} snapshot (${snapshot.source})`);
  return snapshot;
}

export const userspaceTracer: ModeTracer = {
  mode: USERSPACE_TRACE_MODE,
  readLive: readUserspaceLive,
  fromDryRun: userspaceSnapshotFromDryRun,
  trace: (snapshot, packet, node) => traceUserspace(own(snapshot), packet, node),
  objectsOf: (snapshot, service) => userspaceObjectsOf(own(snapshot), service),
};
