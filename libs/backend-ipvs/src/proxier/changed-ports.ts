/**
 * The service ports a partial IPVS sync must rebuild: every port of every Service core's change
 * trackers reported (UpdateServiceMapResult / UpdateEndpointsMapResult.updatedServices, the same
 * names the iptables and nftables partial syncs use), whether the port exists now (the service map)
 * or existed at the last sync (the index's keys: a deleted port is in the index only).
 *
 * A service port key is `namespace/name` or `namespace/name:port` (ServicePortName.key), and a
 * namespaced name never holds a ':'; one changed Service is matched by prefix without allocating,
 * so the common one-Service change costs a pass of string compares over the keys.
 */
import type { AppliedChanges, ServicePortMap } from '@kube-proxy/core';

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
export function changedServicePorts(applied: AppliedChanges, serviceMap: ServicePortMap, known: Iterable<string>): Set<string> {
  const names = new Set<string>(applied.services.updatedServices);
  for (const n of applied.endpoints.updatedServices) names.add(n);
  const out = new Set<string>();
  if (names.size === 0) return out;
  const few = names.size <= PREFIX_SCAN_LIMIT ? [...names] : null;
  const visit = (key: string): void => {
    if (few === null ? names.has(nameOf(key)) : few.some((n) => portOf(key, n))) out.add(key);
  };
  for (const key of serviceMap.keys()) visit(key);
  for (const key of known) visit(key);
  return out;
}
