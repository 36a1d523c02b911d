/**
 * What the echo backend "programs": a plain description of the service ports and endpoints its
 * proxier holds after a sync. Pure, so a plugin author can see exactly what core's ProxyState hands a
 * backend without any datapath in the way.
 */

/**
 * @typedef {import('@kube-proxy/core').ServicePortMap} ServicePortMap
 * @typedef {import('@kube-proxy/core').EndpointsMap} EndpointsMap
 *
 * @typedef {object} EchoEndpoint
 * @property {string} endpoint `ip:port`
 * @property {boolean} ready
 * @property {boolean} local
 *
 * @typedef {object} EchoServicePort
 * @property {string} name ServicePortName key, e.g. `default/web:http`
 * @property {string} clusterIP
 * @property {number} port
 * @property {string} protocol
 * @property {number} nodePort 0 when none
 * @property {EchoEndpoint[]} endpoints
 *
 * @typedef {object} EchoFamilyState
 * @property {number} syncs successful syncs of this family so far
 * @property {EchoServicePort[]} services sorted by name
 */

/**
 * @param {ServicePortMap} services
 * @param {EndpointsMap} endpoints
 * @param {number} syncs
 * @returns {EchoFamilyState}
 */
export function snapshotState(services, endpoints, syncs) {
  const out = [];
  for (const [key, sp] of services) {
    out.push({
      name: key,
      clusterIP: sp.clusterIP,
      port: sp.port,
      protocol: sp.protocol,
      nodePort: sp.nodePort,
      endpoints: (endpoints.get(key) ?? []).map((ep) => ({ endpoint: ep.key, ready: ep.ready, local: ep.isLocal })),
    });
  }
  // Map order follows event order; sorting keeps the file stable across restarts.
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { syncs, services: out };
}
