/**
 * The service ports a partial IPVS sync must rebuild: every port of every Service core's change
 * trackers reported (UpdateServiceMapResult / UpdateEndpointsMapResult.updatedServices, the same
 * names the iptables and nftables partial syncs use), whether the port exists now (the service map)
 * or existed at the last sync (the index: a deleted port is in the index only).
 *
 * A Service whose endpoints alone changed has exactly the ports the index holds for it (a port it
 * gained or lost is a Service change, reported as one), so the common one-endpoint change costs one
 * lookup, not a pass over 10,000 keys. A changed Service is looked for in the service map: a service
 * port key is `namespace/name` or `namespace/name:port` (ServicePortName.key), and a namespaced name
 * never holds a ':', so a few Services are matched by prefix without allocating, many by one lookup
 * per key.
 */
import type { AppliedChanges, ServicePortMap } from '@kube-proxy/core';

/** What the index knows: the ports of a Service at the last sync. */
export interface KnownPorts {
  portsOf(name: string): readonly string[];
}

/** Whether `key` is a port of the Service `name` (`ns/name` or `ns/name:port`). */
function portOf(key: string, name: string): boolean {
  return key.startsWith(name) && (key.length === name.length || key.charCodeAt(name.length) === 58 /* : */);
}

function nameOf(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : key.slice(0, colon);
}

/** Past this many changed Services one lookup per key beats a prefix compare per Service. */
const PREFIX_SCAN_LIMIT = 8;

/** The keys of every port of the changed Services, now or at the last sync (each once). */
export function changedServicePorts(applied: AppliedChanges, serviceMap: ServicePortMap, known: KnownPorts): Set<string> {
  const out = new Set<string>();
  for (const name of applied.endpoints.updatedServices) for (const key of known.portsOf(name)) out.add(key);
  const services = applied.services.updatedServices;
  if (services.size === 0) return out;
  for (const name of services) for (const key of known.portsOf(name)) out.add(key);
  const few = services.size <= PREFIX_SCAN_LIMIT ? [...services] : null;
  for (const key of serviceMap.keys()) {
    if (few === null ? services.has(nameOf(key)) : few.some((n) => portOf(key, n))) out.add(key);
  }
  return out;
}
