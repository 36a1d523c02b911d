/**
 * The fixed part of the kube-proxy table: base chains on the netfilter hooks, the jumps from them,
 * the dispatch and check chains, and the declarations of the shared sets and maps (upstream's
 * setupNFTables, in the layout after kubernetes PR #132456: filter checks before DNAT at priority
 * -110 for source ranges, after DNAT at priority 0 for missing endpoints and unknown cluster IPs), as
 * upstream v1.36+ writes it: no mark-for-masquerade chain, a two-rule masquerading chain matching
 * the mark and the hairpin-connections set, and the cluster-IP masquerade rule heading `services`.
 */
import type { ChainDecl, MapDecl, NftFamily, SetDecl } from '../nft/nft-objects.js';
import { ruleText } from '../nft/nft-objects.js';
import { CHAIN, MAP, SET } from './table-names.js';

export interface SkeletonOptions {
  readonly family: NftFamily;
  /** e.g. 0x00004000 (nftables.masqueradeBit). */
  readonly masqueradeMark: string;
  /** ServiceCIDRs of this family: traffic to an unallocated address in them is dropped. */
  readonly serviceCIDRs: readonly string[];
  /** Node ports answer on every local address (no nodePortAddresses) rather than on `nodePortIPs`. */
  readonly nodePortsOnAllAddresses: boolean;
  /** The addresses node ports answer on (when not all). */
  readonly nodePortIPs: readonly string[];
  /** --masquerade-all: every connection to a cluster IP is masqueraded. */
  readonly masqueradeAll?: boolean;
  /** The local-traffic detector's "not from a pod" match (`ip saddr != 10.0.0.0/8`), null when none is configured. */
  readonly notLocal?: string | null;
}

export interface ChainWithRules {
  readonly decl: ChainDecl;
  readonly rules: readonly string[];
}

export interface TableSkeleton {
  /** In creation order: base chains first, then the regular chains they jump to. */
  readonly chains: readonly ChainWithRules[];
  readonly sets: readonly SetDecl[];
  readonly maps: readonly MapDecl[];
  /** Elements of nodeport-ips (empty when node ports answer on all addresses). */
  readonly nodePortIPs: readonly string[];
}

const BASE_CHAINS: readonly ChainDecl[] = [
  { name: CHAIN.filterPreroutingPreDNAT, base: { type: 'filter', hook: 'prerouting', priority: -110 } },
  { name: CHAIN.filterOutputPreDNAT, base: { type: 'filter', hook: 'output', priority: -110 } },
  { name: CHAIN.filterForward, base: { type: 'filter', hook: 'forward', priority: 0 } },
  { name: CHAIN.filterInput, base: { type: 'filter', hook: 'input', priority: 0 } },
  { name: CHAIN.filterOutput, base: { type: 'filter', hook: 'output', priority: 0 } },
  { name: CHAIN.natPrerouting, base: { type: 'nat', hook: 'prerouting', priority: -100 } },
  { name: CHAIN.natOutput, base: { type: 'nat', hook: 'output', priority: -100 } },
  { name: CHAIN.natPostrouting, base: { type: 'nat', hook: 'postrouting', priority: 100 } },
];

/** Base chain → the chains it jumps to, in rule order. */
const JUMPS: ReadonlyArray<readonly [string, string, string]> = [
  [CHAIN.filterPreroutingPreDNAT, CHAIN.firewallCheck, 'ct state new'],
  [CHAIN.filterOutputPreDNAT, CHAIN.firewallCheck, 'ct state new'],
  [CHAIN.filterForward, CHAIN.serviceEndpointsCheck, 'ct state new'],
  [CHAIN.filterForward, CHAIN.clusterIPsCheck, 'ct state new'],
  [CHAIN.filterInput, CHAIN.nodePortEndpointsCheck, 'ct state new'],
  [CHAIN.filterInput, CHAIN.serviceEndpointsCheck, 'ct state new'],
  [CHAIN.filterOutput, CHAIN.serviceEndpointsCheck, 'ct state new'],
  [CHAIN.filterOutput, CHAIN.clusterIPsCheck, 'ct state new'],
  [CHAIN.natPrerouting, CHAIN.services, ''],
  [CHAIN.natOutput, CHAIN.services, ''],
  [CHAIN.natPostrouting, CHAIN.masquerading, ''],
];

/**
 * The one rule (head of `services`) marking traffic to any cluster IP for masquerading: all of it
 * under --masquerade-all, else what does not come from a pod; none without a local-traffic detector.
 * Upstream v1.36+ writes it once here instead of once per service chain.
 */
function clusterIPMasquerade(o: SkeletonOptions): string | null {
  const head = `${o.family} daddr @${SET.clusterIPs}`;
  const mark = `mark set mark or ${o.masqueradeMark}`;
  let match: string;
  if (o.masqueradeAll) match = head;
  else if (o.notLocal) match = `${head} ${o.notLocal}`;
  else return null;
  return ruleText(`${match} ${mark}`, 'masquerade clusterIP traffic from outside cluster');
}

export function tableSkeleton(o: SkeletonOptions): TableSkeleton {
  const ipX = o.family;
  const addr = o.family === 'ip6' ? 'ipv6_addr' : 'ipv4_addr';
  const noLocalhost = o.family === 'ip6' ? 'ip6 daddr != ::1' : 'ip daddr != 127.0.0.0/8';
  const tuple = `${addr} . inet_proto . inet_service : verdict`;
  const dispatch = `${ipX} daddr . meta l4proto . th dport vmap @`;
  const nodePortMatch = o.nodePortsOnAllAddresses ? noLocalhost : `${ipX} daddr @${SET.nodePortIPs}`;

  const rules = new Map<string, string[]>();
  const add = (chain: string, rule: string) => {
    let list = rules.get(chain);
    if (!list) rules.set(chain, (list = []));
    list.push(rule);
  };
  for (const [from, to, match] of JUMPS) add(from, match === '' ? `jump ${to}` : `${match} jump ${to}`);
  // Marked connections, and hairpin connections (a pod reaching itself through a service, source =
  // destination after DNAT), are masqueraded; the mark is cleared so it does not leak further.
  add(CHAIN.masquerading, `mark and ${o.masqueradeMark} != 0 mark set mark xor ${o.masqueradeMark} masquerade fully-random`);
  add(CHAIN.masquerading, `ct status dnat ${ipX} saddr . ${ipX} daddr . meta l4proto . th dport @${SET.hairpinConnections} masquerade fully-random`);
  add(CHAIN.clusterIPsCheck, ruleText(`${ipX} daddr @${SET.clusterIPs} reject`, 'Reject traffic to invalid ports of ClusterIPs'));
  if (o.serviceCIDRs.length > 0) {
    add(CHAIN.clusterIPsCheck, ruleText(`${ipX} daddr { ${o.serviceCIDRs.join(',')} } drop`, 'Drop traffic to unallocated ClusterIPs'));
  }
  add(CHAIN.reject, 'reject');
  add(CHAIN.serviceEndpointsCheck, dispatch + MAP.noEndpointServices);
  add(CHAIN.nodePortEndpointsCheck, `${nodePortMatch} meta l4proto . th dport vmap @${MAP.noEndpointNodePorts}`);
  add(CHAIN.firewallCheck, dispatch + MAP.firewallIPs);
  const clusterMasq = clusterIPMasquerade(o);
  if (clusterMasq !== null) add(CHAIN.services, clusterMasq);
  add(CHAIN.services, dispatch + MAP.serviceIPs);
  add(
    CHAIN.services,
    o.nodePortsOnAllAddresses
      ? `fib daddr type local ${noLocalhost} meta l4proto . th dport vmap @${MAP.serviceNodePorts}`
      : `${ipX} daddr @${SET.nodePortIPs} meta l4proto . th dport vmap @${MAP.serviceNodePorts}`,
  );

  const regular: ChainDecl[] = [
    { name: CHAIN.firewallCheck },
    { name: CHAIN.serviceEndpointsCheck },
    { name: CHAIN.clusterIPsCheck },
    { name: CHAIN.nodePortEndpointsCheck },
    { name: CHAIN.services },
    { name: CHAIN.masquerading },
    { name: CHAIN.reject, comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports' },
  ];
  const chains = [...BASE_CHAINS, ...regular].map((decl) => ({ decl, rules: rules.get(decl.name) ?? [] }));

  const sets: SetDecl[] = [{ name: SET.clusterIPs, type: addr, comment: 'Active ClusterIPs' }];
  if (!o.nodePortsOnAllAddresses) sets.push({ name: SET.nodePortIPs, type: addr, comment: 'IPs that accept NodePort traffic' });
  sets.push({ name: SET.hairpinConnections, type: `${addr} . ${addr} . inet_proto . inet_service`, comment: 'service hairpin connections' });
  const maps: MapDecl[] = [
    { name: MAP.noEndpointServices, type: tuple, comment: 'vmap to drop or reject packets to services with no endpoints' },
    { name: MAP.noEndpointNodePorts, type: 'inet_proto . inet_service : verdict', comment: 'vmap to drop or reject packets to service nodeports with no endpoints' },
    { name: MAP.firewallIPs, type: tuple, comment: 'destinations that are subject to LoadBalancerSourceRanges' },
    { name: MAP.serviceIPs, type: tuple, comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic' },
    { name: MAP.serviceNodePorts, type: 'inet_proto . inet_service : verdict', comment: 'NodePort traffic' },
  ];
  return { chains, sets, maps, nodePortIPs: o.nodePortsOnAllAddresses ? [] : o.nodePortIPs };
}
