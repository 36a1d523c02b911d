/**
 * One service port's objects in the kube-proxy table, from core's plan: its chains with their rules,
 * its affinity sets and its elements in the shared sets and maps. Upstream's nftables
 * syncProxyRules writes the same objects inline, service by service; here they are data, so a sync
 * can compare them with what the kernel holds and write only the difference.
 */
import { cidrContains, endpointSetOf, type Endpoint, type ServicePortPlan } from '@kube-proxy/core';
import { AFFINITY_PREFIX, CLUSTER_POLICY_PREFIX, ENDPOINT_PREFIX, EXTERNAL_PREFIX, FIREWALL_PREFIX, LOCAL_POLICY_PREFIX } from '../names/object-names.js';
import type { NameCache } from '../names/name-cache.js';
import { ruleText, type ElementSpec, type NftFamily } from '../nft/nft-objects.js';
import type { NftLocalMatch } from './local-detector-nft.js';
import { CHAIN, MAP, SET } from './table-names.js';

export interface ChainContent {
  readonly name: string;
  /** Rule texts in order, comments attached. */
  readonly rules: readonly string[];
}

export interface AffinitySet {
  readonly name: string;
  readonly timeoutSeconds: number;
}

export interface PlacedElement extends ElementSpec {
  readonly container: string;
}

export interface ServicePortRender {
  readonly chains: readonly ChainContent[];
  readonly affinitySets: readonly AffinitySet[];
  readonly elements: readonly PlacedElement[];
  /** sync_proxy_rules_no_local_endpoints_total: internal / external traffic with nothing local to reach. */
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

export interface RenderContext {
  readonly family: NftFamily;
  readonly masqueradeAll: boolean;
  readonly local: NftLocalMatch | null;
  /** This node's IP of the family (lets the node through source ranges), null if unknown. */
  readonly nodeIP: string | null;
  readonly names: NameCache;
}

const REJECT_VERDICT = `goto ${CHAIN.reject}`;
const MARK_MASQ = `jump ${CHAIN.markForMasquerade}`;

function verdictOf(v: 'reject' | 'drop' | null): string {
  return v === 'drop' ? 'drop' : REJECT_VERDICT;
}

/** Rules sending a policy chain's traffic to its endpoints: affinity first, then a random pick. */
function endpointDispatch(ipX: string, endpoints: readonly Endpoint[], chainOf: (ep: Endpoint) => string, affinityOf: ((ep: Endpoint) => string) | null): string[] {
  const rules: string[] = [];
  if (affinityOf) for (const ep of endpoints) rules.push(`${ipX} saddr @${affinityOf(ep)} goto ${chainOf(ep)}`);
  let vmap = '';
  for (let i = 0; i < endpoints.length; i++) vmap += `${i === 0 ? '' : ' , '}${i} : goto ${chainOf(endpoints[i])}`;
  rules.push(`numgen random mod ${endpoints.length} vmap { ${vmap} }`);
  return rules;
}

export function renderServicePort(plan: ServicePortPlan, ctx: RenderContext): ServicePortRender {
  const svc = plan.service;
  const ipX = ctx.family;
  const protocol = svc.protocol.toLowerCase();
  const port = String(svc.port);
  const base = ctx.names.service(svc.name);
  const clusterChain = CLUSTER_POLICY_PREFIX + base;
  const localChain = LOCAL_POLICY_PREFIX + base;
  const externalChain = EXTERNAL_PREFIX + base;
  const firewallChain = FIREWALL_PREFIX + base;
  const comment = svc.name.key;
  const epBase = (ep: Endpoint) => ctx.names.endpoint(svc.name, ep);
  const epChain = (ep: Endpoint) => ENDPOINT_PREFIX + epBase(ep);
  const affinityOf = plan.sessionAffinity ? (ep: Endpoint) => AFFINITY_PREFIX + epBase(ep) : null;

  const chains: ChainContent[] = [];
  const elements: PlacedElement[] = [];
  const affinitySets: AffinitySet[] = [];

  const internalChain = plan.internalEndpoints === 'local' ? localChain : clusterChain;
  const externalPolicyChain = plan.externalEndpoints === 'local' ? localChain : clusterChain;
  const usesExternalChain = plan.externalMasquerade !== 'none';
  const hasEndpoints = plan.hasEndpoints;
  const internalVerdict = verdictOf(plan.internalVerdict);
  const externalVerdict = verdictOf(plan.externalVerdict);

  // Elements: where each of the port's addresses sends its traffic.
  elements.push({ container: SET.clusterIPs, key: plan.clusterIP });
  const clusterKey = `${plan.clusterIP} . ${protocol} . ${port}`;
  if (plan.internalReachable) elements.push({ container: MAP.serviceIPs, key: clusterKey, value: `goto ${internalChain}` });
  else elements.push({ container: MAP.noEndpointServices, key: clusterKey, value: internalVerdict, comment });

  for (const ip of plan.externalIPs) {
    const key = `${ip} . ${protocol} . ${port}`;
    if (hasEndpoints) elements.push({ container: MAP.serviceIPs, key, value: `goto ${externalChain}` });
    if (!plan.externalReachable) elements.push({ container: MAP.noEndpointServices, key, value: externalVerdict, comment });
  }

  // Upstream's nftables mode guards load-balancer IPs by source range whether or not the service
  // has endpoints (its iptables mode, and so core's plan.firewalled, only with endpoints): decided
  // from the service itself here, to stay rule for rule with the nftables proxier.
  const ranges = svc.loadBalancerSourceRanges;
  const usesFirewall = plan.loadBalancerIPs.length > 0 && ranges.length > 0;
  for (const ip of plan.loadBalancerIPs) {
    const key = `${ip} . ${protocol} . ${port}`;
    if (hasEndpoints) elements.push({ container: MAP.serviceIPs, key, value: `goto ${externalChain}` });
    if (usesFirewall) elements.push({ container: MAP.firewallIPs, key, value: `goto ${firewallChain}` });
  }
  if (!plan.externalReachable) {
    for (const ip of plan.loadBalancerIPs) {
      elements.push({ container: MAP.noEndpointServices, key: `${ip} . ${protocol} . ${port}`, value: externalVerdict, comment });
    }
  }
  if (plan.nodePort !== 0) {
    const key = `${protocol} . ${plan.nodePort}`;
    if (hasEndpoints) elements.push({ container: MAP.serviceNodePorts, key, value: `goto ${externalChain}` });
    if (!plan.externalReachable) elements.push({ container: MAP.noEndpointNodePorts, key, value: externalVerdict, comment });
  }

  // Chains. Rules of the policy chain the cluster IP leads to start with its masquerade rule.
  const clusterRules: string[] = [];
  const localRules: string[] = [];
  if (plan.internalReachable && plan.internalMasquerade !== 'none') {
    const masq =
      plan.internalMasquerade === 'all' || !ctx.local
        ? `${ipX} daddr ${plan.clusterIP} ${MARK_MASQ}`
        : `${ipX} daddr ${plan.clusterIP} ${ctx.local.notLocal} ${MARK_MASQ}`;
    (internalChain === localChain ? localRules : clusterRules).push(masq);
  }

  if (usesExternalChain) {
    const rules: string[] = [];
    if (plan.externalMasquerade === 'all') {
      rules.push(MARK_MASQ);
    } else {
      // Pods and the node itself are not "external": they skip the Local policy (as if going out to
      // the load balancer and back), and the node's own traffic is masqueraded as its source is a VIP.
      if (ctx.local) rules.push(ruleText(`${ctx.local.local} goto ${clusterChain}`, 'short-circuit pod traffic'));
      rules.push(ruleText(`fib saddr type local ${MARK_MASQ}`, 'masquerade local traffic'));
      rules.push(ruleText(`fib saddr type local goto ${clusterChain}`, 'short-circuit local traffic'));
    }
    if (plan.externalReachable) rules.push(`goto ${externalPolicyChain}`);
    chains.push({ name: externalChain, rules });
  }

  if (usesFirewall) {
    let sources = ranges.join(' , ');
    const allowNode = ctx.nodeIP !== null && ranges.some((r) => cidrContains(r, ctx.nodeIP!));
    // A VIP-like load balancer's IP is often local: the node's own requests then arrive from the VIP.
    if (allowNode) for (const ip of plan.loadBalancerIPs) sources += ` , ${ip}`;
    chains.push({ name: firewallChain, rules: [`${ipX} saddr != { ${sources} } drop`] });
  }

  if (affinityOf) {
    for (const ep of plan.reachableEndpoints) affinitySets.push({ name: affinityOf(ep), timeoutSeconds: plan.affinitySeconds });
  }
  if (plan.balancesClusterEndpoints) {
    clusterRules.push(...endpointDispatch(ipX, endpointSetOf(plan, 'cluster'), epChain, affinityOf));
    chains.push({ name: clusterChain, rules: clusterRules });
  }
  if (plan.balancesLocalEndpoints) {
    localRules.push(...endpointDispatch(ipX, endpointSetOf(plan, 'local'), epChain, affinityOf));
    chains.push({ name: localChain, rules: localRules });
  }
  const l4 = `meta l4proto ${protocol} dnat to `;
  for (const ep of plan.reachableEndpoints) {
    const rules = [`${ipX} saddr ${ep.ip} ${MARK_MASQ}`];
    if (affinityOf) rules.push(`update @${affinityOf(ep)} { ${ipX} saddr }`);
    rules.push(l4 + ep.key);
    chains.push({ name: epChain(ep), rules });
  }

  return {
    chains,
    affinitySets,
    elements,
    noLocalInternal: hasEndpoints && !plan.internalReachable,
    noLocalExternal: hasEndpoints && !plan.externalReachable,
  };
}
