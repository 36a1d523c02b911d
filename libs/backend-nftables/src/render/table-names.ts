/** The fixed chains, sets and maps of the kube-proxy table (upstream's names, after kubernetes PR #132456; v1.36+ layout). */
export const CHAIN = {
  filterPreroutingPreDNAT: 'filter-prerouting-pre-dnat',
  filterOutputPreDNAT: 'filter-output-pre-dnat',
  filterForward: 'filter-forward',
  filterInput: 'filter-input',
  filterOutput: 'filter-output',
  natPrerouting: 'nat-prerouting',
  natOutput: 'nat-output',
  natPostrouting: 'nat-postrouting',
  services: 'services',
  serviceEndpointsCheck: 'service-endpoints-check',
  nodePortEndpointsCheck: 'nodeport-endpoints-check',
  reject: 'reject-chain',
  clusterIPsCheck: 'cluster-ips-check',
  firewallCheck: 'firewall-check',
  masquerading: 'masquerading',
} as const;

export const SET = {
  clusterIPs: 'cluster-ips',
  nodePortIPs: 'nodeport-ips',
  /** endpoint . endpoint . protocol . port of each local endpoint in use (upstream v1.36+). */
  hairpinConnections: 'hairpin-connections',
} as const;

export const MAP = {
  serviceIPs: 'service-ips',
  serviceNodePorts: 'service-nodeports',
  noEndpointServices: 'no-endpoint-services',
  noEndpointNodePorts: 'no-endpoint-nodeports',
  firewallIPs: 'firewall-ips',
} as const;

/** The element containers whose contents follow the services (diffed element by element). */
export const SERVICE_CONTAINERS: readonly string[] = [
  SET.clusterIPs,
  MAP.serviceIPs,
  MAP.serviceNodePorts,
  MAP.noEndpointServices,
  MAP.noEndpointNodePorts,
  MAP.firewallIPs,
  SET.hairpinConnections,
];
