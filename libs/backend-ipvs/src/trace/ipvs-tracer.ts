/**
 * The IPVS mode's ModeTracer (core's packet-trace contract): snapshots from the host's tools
 * (readLive) or from our --dry-run block (fromDryRun), traced like the kernel (trace-ipvs.ts).
 */
import type { KernelObject, ModeTracer, RuleSnapshot, ServiceAddressHint } from '@kube-proxy/core';
import { ipvsSnapshotFromDryRun } from './ipvs-dry-run.js';
import { readIpvsLive } from './ipvs-live.js';
import { ipvsObjectsAt, ipvsObjectsOf } from './ipvs-objects.js';
import { IPVS_TRACE_MODE, isIpvsSnapshot, type IpvsSnapshot } from './ipvs-snapshot.js';
import { traceIpvs } from './trace-ipvs.js';

function own(snapshot: RuleSnapshot): IpvsSnapshot {
  if (!isIpvsSnapshot(snapshot)) throw new Error(`the IPVS tracer cannot read a ${snapshot.mode} snapshot (${snapshot.source})`);
  return snapshot;
}

/**
 * Neither our IPVS layout nor upstream's names a Service on its kernel objects, so without ipset
 * comments the objects are found at the addresses the caller knows the Service answers on.
 */
function objectsOf(snapshot: IpvsSnapshot, service: string, addresses: readonly ServiceAddressHint[] = []): KernelObject[] {
  const named = ipvsObjectsOf(snapshot, service);
  if (named.length > 0 || addresses.length === 0) return named;
  const byPort = new Map<string, ServiceAddressHint[]>();
  for (const a of addresses) byPort.set(a.servicePort, [...(byPort.get(a.servicePort) ?? []), a]);
  const out: KernelObject[] = [];
  for (const [servicePort, hints] of byPort) {
    const at = ipvsObjectsAt(snapshot, hints.map((h) => ({ protocol: h.protocol, address: h.ip, port: h.port })));
    out.push(...at.map((o) => ({ ...o, servicePort })));
  }
  return out;
}

export const ipvsTracer: ModeTracer = {
  mode: IPVS_TRACE_MODE,
  readLive: readIpvsLive,
  fromDryRun: ipvsSnapshotFromDryRun,
  trace: (snapshot, packet, node) => traceIpvs(own(snapshot), packet, node),
  objectsOf: (snapshot, service, addresses) => objectsOf(own(snapshot), service, addresses),
};
