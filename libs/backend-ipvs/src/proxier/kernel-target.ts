/**
 * What the kernel's IPVS table of one family should hold after a sync, from the desired state and
 * what `ipvsadm --save -n` read back — upstream's syncService / syncEndpoint / cleanLegacyService
 * and its GracefulTerminationManager (pkg/proxy/ipvs/graceful_termination.go) as one pure step:
 *
 * - every desired virtual server, with its desired real servers at weight 1 (a real server the
 *   kernel has at weight 0 — graceful termination by us or a previous run — gets weight 1 back);
 * - a real server the kernel has but the desired state no longer lists is removed gracefully: for
 *   TCP it stays, at weight 0 (no new connections; expire_quiescent_template ends persistence), as
 *   long as /proc/net/ip_vs counts an active or inactive connection to it, and is deleted by the
 *   first sync that finds none; UDP and SCTP real servers are deleted at once, as upstream
 *   (expire_nodest_conn drops their flows on the next packet);
 * - a virtual server the kernel has and nobody wants is deleted with its real servers, unless its
 *   address is inside --ipvs-exclude-cidrs (upstream's cleanLegacyService, which owns every other
 *   virtual server of its family on the node).
 * Connection counts are read only when some TCP real server is on its way out.
 */
import { cidrContains, type Protocol } from '@kube-proxy/core';
import type { IpvsConnections } from '../kernel/ipvs-kernel.js';
import type { RealServer, VirtualServer } from '../state/ipvs-state.js';

/** Upstream's IsRsGracefulTerminationNeeded: everything but UDP and SCTP. */
export function gracefulTerminationNeeded(protocol: Protocol): boolean {
  return protocol !== 'UDP' && protocol !== 'SCTP';
}

export interface KernelTargetInput {
  readonly desired: readonly VirtualServer[];
  readonly current: readonly VirtualServer[];
  /** --ipvs-exclude-cidrs of this family. */
  readonly excludeCIDRs: readonly string[];
  /** Reads /proc/net/ip_vs; called at most once, and only when needed. */
  readonly connections: () => Promise<IpvsConnections>;
}

export interface KernelTarget {
  /** What the kernel should hold (sorted by key, real servers too). */
  readonly virtualServers: readonly VirtualServer[];
  /** `VS key -> RS key` of the real servers kept at weight 0 because connections remain. */
  readonly terminating: readonly string[];
  /** Real servers deleted by this sync because they were drained (or not TCP). */
  readonly drained: readonly string[];
}

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function excluded(vs: VirtualServer, cidrs: readonly string[]): boolean {
  return cidrs.some((c) => cidrContains(c, vs.address));
}

export async function kernelTarget(input: KernelTargetInput): Promise<KernelTarget> {
  const current = new Map(input.current.map((vs) => [vs.key, vs]));
  const desiredKeys = new Set(input.desired.map((vs) => vs.key));
  let connections: IpvsConnections | undefined;
  const terminating: string[] = [];
  const drained: string[] = [];
  const out: VirtualServer[] = [];

  for (const vs of input.desired) {
    const now = current.get(vs.key);
    if (now === undefined) {
      out.push(vs);
      continue;
    }
    const wanted = new Set(vs.realServers.map((rs) => rs.key));
    const leaving = now.realServers.filter((rs) => !wanted.has(rs.key));
    if (leaving.length === 0) {
      out.push(vs);
      continue;
    }
    const kept: RealServer[] = [];
    for (const rs of leaving) {
      const name = `${vs.key} -> ${rs.key}`;
      if (gracefulTerminationNeeded(vs.protocol)) {
        connections ??= await input.connections();
        const c = connections.get(vs.key)?.get(rs.key);
        if (c !== undefined && c.active + c.inactive > 0) {
          kept.push(rs.weight === 0 ? rs : { ...rs, weight: 0 });
          terminating.push(name);
          continue;
        }
      }
      drained.push(name);
    }
    out.push(kept.length === 0 ? vs : { ...vs, realServers: [...vs.realServers, ...kept].sort(byKey) });
  }
  // Not wanted: kept only inside --ipvs-exclude-cidrs.
  for (const vs of input.current) {
    if (!desiredKeys.has(vs.key) && excluded(vs, input.excludeCIDRs)) out.push(vs);
  }
  return { virtualServers: out.sort(byKey), terminating, drained };
}
