import type { Endpoint } from '../model/endpoint.js';
import type { ServicePortName } from '../model/service-port-name.js';
import type { PortEndpoints, ServiceEndpoints } from './endpoints-change.js';
import type { ServiceEndpoint } from './types.js';

/**
 * Finds what may have left stale UDP conntrack entries when one Service's endpoints went from
 * `previous` to `current` (upstream's detectStaleConntrackEntries, serving-based since 1.29):
 *
 * - a UDP endpoint that was serving and is now gone or no longer serving: flows may still be NATed to
 *   it, so its entries must go (`deletedUDPEndpoints`);
 * - a UDP port that had no serving endpoint and now has one: while it had none, packets may have
 *   created entries that blackhole the service IP, which must go too (`newlyActiveUDPServices`).
 *
 * Serving rather than ready is what counts, because terminating-but-serving endpoints still get
 * traffic when nothing is ready.
 */
export function detectStaleConntrackEntries(
  previous: ServiceEndpoints,
  current: ServiceEndpoints,
  deletedUDPEndpoints: ServiceEndpoint[],
  newlyActiveUDPServices: ServicePortName[],
): void {
  for (const [key, old] of previous) {
    if (old.name.protocol !== 'UDP') continue;
    let stillServing: Set<string> | undefined;
    for (const ep of old.endpoints) {
      if (!ep.serving) continue;
      stillServing ??= servingKeys(sameProtocol(current.get(key), old.name.protocol));
      if (!stillServing.has(ep.key)) deletedUDPEndpoints.push({ endpoint: ep.key, servicePortName: old.name });
    }
  }

  for (const [key, now] of current) {
    if (now.name.protocol !== 'UDP') continue;
    const before = sameProtocol(previous.get(key), 'UDP');
    if (hasServing(now.endpoints) && !hasServing(before)) newlyActiveUDPServices.push(now.name);
  }
}

/**
 * Upstream keys these maps by port name and protocol; ours are keyed by name alone, so a port that
 * changed protocol must not be mistaken for the same port.
 */
function sameProtocol(entry: PortEndpoints | undefined, protocol: string): readonly Endpoint[] | undefined {
  return entry !== undefined && entry.name.protocol === protocol ? entry.endpoints : undefined;
}

function servingKeys(endpoints: readonly Endpoint[] | undefined): Set<string> {
  const keys = new Set<string>();
  if (endpoints !== undefined) for (const ep of endpoints) if (ep.serving) keys.add(ep.key);
  return keys;
}

function hasServing(endpoints: readonly Endpoint[] | undefined): boolean {
  return endpoints !== undefined && endpoints.some((ep) => ep.serving);
}
