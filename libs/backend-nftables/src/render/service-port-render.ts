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
import { flatString } from '../nft/flat-strings.js';

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
  /** e.g. 0x4000: set inline where traffic must be masqueraded (upstream v1.36+ has no mark chain). */
  readonly masqueradeMark: string;
  readonly masqueradeAll: boolean;
  readonly local: NftLocalMatch | null;
  /** This node's IP of the family (lets the node through source ranges), null if unknown. */
  readonly nodeIP: string | null;
  readonly names: NameCache;
}

const REJECT_VERDICT = `goto ${CHAIN.reject}`;

function verdictOf(v: 'reject' | 'drop' | null): string {
  return v === 'drop' ? 'drop' : REJECT_VERDICT;
}

/** The names one service port's objects use, computed once per render and passed to each step. */
interface PortNames {
  readonly svc: ServicePortPlan['service'];
  readonly protocol: string;
  readonly port: string;
  readonly clusterChain: string;
  readonly localChain: string;
  readonly externalChain: string;
  readonly firewallChain: string;
  /** The chain the cluster IP leads to, and the one external traffic is balanced by. */
  readonly internalChain: string;
  readonly externalPolicyChain: string;
  /** Comment of the no-endpoint elements: the service port's name. */
  readonly comment: string;
}

function portNames(plan: ServicePortPlan, ctx: RenderContext): PortNames {
  const svc = plan.service;
  const base = ctx.names.service(svc.name);
  const clusterChain = CLUSTER_POLICY_PREFIX + base;
  const localChain = LOCAL_POLICY_PREFIX + base;
  return {
    svc,
    protocol: svc.protocol.toLowerCase(),
    port: String(svc.port),
    clusterChain,
    localChain,
    externalChain: EXTERNAL_PREFIX + base,
    firewallChain: FIREWALL_PREFIX + base,
    internalChain: plan.internalEndpoints === 'local' ? localChain : clusterChain,
    externalPolicyChain: plan.externalEndpoints === 'local' ? localChain : clusterChain,
    comment: svc.name.key,
  };
}

function endpointChain(ctx: RenderContext, n: PortNames, ep: Endpoint): string {
  return ENDPOINT_PREFIX + ctx.names.endpoint(n.svc.name, ep);
}

function affinitySetName(ctx: RenderContext, n: PortNames, ep: Endpoint): string {
  return AFFINITY_PREFIX + ctx.names.endpoint(n.svc.name, ep);
}

/**
 * Rules sending a policy chain's traffic to its endpoints (upstream v1.36+). With ClientIP affinity
 * the endpoints keep their chains (the affinity sets are updated there): lookups first, then a
 * random pick among the chains. Without, there are no endpoint chains: one `dnat … numgen … map`
 * rule, or for a single endpoint a plain `dnat to` (kubernetes PR #140723 as fixed for IPv6 by
 * #140960: every map in the table makes adding rules slower, so one endpoint gets none).
 */
function endpointDispatch(ctx: RenderContext, n: PortNames, endpoints: readonly Endpoint[], affinity: boolean): string[] {
  const ipX = ctx.family;
  if (!affinity) {
    if (endpoints.length === 1) return [`meta l4proto ${n.protocol} dnat to ${endpoints[0].key}`];
    let map = '';
    for (let i = 0; i < endpoints.length; i++) map += `${i === 0 ? '' : ' , '}${i} : ${endpoints[i].ip} . ${endpoints[i].port}`;
    return [`meta l4proto ${n.protocol} dnat ${ipX} addr . port to numgen random mod ${endpoints.length} map { ${map} }`];
  }
  const rules: string[] = [];
  for (const ep of endpoints) rules.push(`${ipX} saddr @${affinitySetName(ctx, n, ep)} goto ${endpointChain(ctx, n, ep)}`);
  let vmap = '';
  for (let i = 0; i < endpoints.length; i++) vmap += `${i === 0 ? '' : ' , '}${i} : goto ${endpointChain(ctx, n, endpoints[i])}`;
  rules.push(`numgen random mod ${endpoints.length} vmap { ${vmap} }`);
  return rules;
}

/**
 * Upstream's nftables mode guards load-balancer IPs by source range whether or not the service has
 * endpoints (its iptables mode, and so core's plan.firewalled, only with endpoints): decided from
 * the service itself here, to stay rule for rule with the nftables proxier.
 */
function usesFirewall(plan: ServicePortPlan): boolean {
  return plan.loadBalancerIPs.length > 0 && plan.service.loadBalancerSourceRanges.length > 0;
}

export function renderServicePort(plan: ServicePortPlan, ctx: RenderContext): ServicePortRender {
  const n = portNames(plan, ctx);
  const chains: ChainContent[] = [];
  const affinitySets: AffinitySet[] = [];

  // Off-cluster traffic to cluster IPs is marked by one rule at the head of `services` (table-skeleton.ts).
  const clusterRules: string[] = [];
  const localRules: string[] = [];

  if (plan.externalMasquerade !== 'none') chains.push({ name: n.externalChain, rules: externalChainRules(plan, ctx, n) });
  if (usesFirewall(plan)) chains.push({ name: n.firewallChain, rules: [firewallRule(plan, ctx)] });

  const affinity = plan.sessionAffinity;
  if (affinity) {
    for (const ep of plan.reachableEndpoints) affinitySets.push({ name: affinitySetName(ctx, n, ep), timeoutSeconds: plan.affinitySeconds });
  }
  if (plan.balancesClusterEndpoints) {
    clusterRules.push(...endpointDispatch(ctx, n, endpointSetOf(plan, 'cluster'), affinity));
    chains.push({ name: n.clusterChain, rules: clusterRules });
  }
  if (plan.balancesLocalEndpoints) {
    localRules.push(...endpointDispatch(ctx, n, endpointSetOf(plan, 'local'), affinity));
    chains.push({ name: n.localChain, rules: localRules });
  }
  writeEndpointChains(plan, ctx, n, chains);

  // Kept until the service changes: flat strings (nft/flat-strings.ts), and one elements array.
  const elements = placeElements(plan, n);
  for (const e of hairpinElements(plan, n)) elements.push(e);
  return flattenRender({
    chains,
    affinitySets,
    elements,
    noLocalInternal: plan.hasEndpoints && !plan.internalReachable,
    noLocalExternal: plan.hasEndpoints && !plan.externalReachable,
  });
}

/** Elements: where each of the port's addresses sends its traffic (a policy chain, or a no-endpoints verdict). */
function placeElements(plan: ServicePortPlan, n: PortNames): PlacedElement[] {
  const { protocol, port, comment } = n;
  const hasEndpoints = plan.hasEndpoints;
  const externalVerdict = verdictOf(plan.externalVerdict);
  const toExternal = `goto ${n.externalChain}`;
  const elements: PlacedElement[] = [{ container: SET.clusterIPs, key: plan.clusterIP }];
  const clusterKey = `${plan.clusterIP} . ${protocol} . ${port}`;
  if (plan.internalReachable) elements.push({ container: MAP.serviceIPs, key: clusterKey, value: `goto ${n.internalChain}` });
  else elements.push({ container: MAP.noEndpointServices, key: clusterKey, value: verdictOf(plan.internalVerdict), comment });

  for (const ip of plan.externalIPs) {
    const key = `${ip} . ${protocol} . ${port}`;
    if (hasEndpoints) elements.push({ container: MAP.serviceIPs, key, value: toExternal });
    if (!plan.externalReachable) elements.push({ container: MAP.noEndpointServices, key, value: externalVerdict, comment });
  }

  const firewalled = usesFirewall(plan);
  for (const ip of plan.loadBalancerIPs) {
    const key = `${ip} . ${protocol} . ${port}`;
    if (hasEndpoints) elements.push({ container: MAP.serviceIPs, key, value: toExternal });
    if (firewalled) elements.push({ container: MAP.firewallIPs, key, value: `goto ${n.firewallChain}` });
  }
  if (!plan.externalReachable) {
    for (const ip of plan.loadBalancerIPs) {
      elements.push({ container: MAP.noEndpointServices, key: `${ip} . ${protocol} . ${port}`, value: externalVerdict, comment });
    }
  }
  if (plan.nodePort !== 0) {
    const key = `${protocol} . ${plan.nodePort}`;
    if (hasEndpoints) elements.push({ container: MAP.serviceNodePorts, key, value: toExternal });
    if (!plan.externalReachable) elements.push({ container: MAP.noEndpointNodePorts, key, value: externalVerdict, comment });
  }
  return elements;
}

/**
 * hairpin-connections elements: a local endpoint reached through the service may be the client
 * itself; after DNAT such a packet has source = destination = the endpoint, and masquerading then
 * makes the reply come back through the node. Upstream adds one element per local endpoint this
 * node may DNAT to (remote endpoints never send their own packets through this node).
 */
function hairpinElements(plan: ServicePortPlan, n: PortNames): PlacedElement[] {
  const out: PlacedElement[] = [];
  for (const ep of plan.reachableEndpoints) {
    if (ep.isLocal) out.push({ container: SET.hairpinConnections, key: `${ep.ip} . ${ep.ip} . ${n.protocol} . ${ep.port}` });
  }
  return out;
}

/** The inline mark that asks the masquerading chain to masquerade this connection. */
function markMasq(ctx: RenderContext): string {
  return `mark set mark or ${ctx.masqueradeMark}`;
}

function externalChainRules(plan: ServicePortPlan, ctx: RenderContext, n: PortNames): string[] {
  const rules: string[] = [];
  if (plan.externalMasquerade === 'all') {
    rules.push(ruleText(markMasq(ctx), 'masquerade'));
  } else {
    // Pods and the node itself are not "external": they skip the Local policy (as if going out to
    // the load balancer and back), and the node's own traffic is masqueraded as its source is a VIP.
    if (ctx.local) rules.push(ruleText(`${ctx.local.local} goto ${n.clusterChain}`, 'short-circuit pod traffic'));
    rules.push(ruleText(`fib saddr type local ${markMasq(ctx)}`, 'masquerade local traffic'));
    rules.push(ruleText(`fib saddr type local goto ${n.clusterChain}`, 'short-circuit local traffic'));
  }
  if (plan.externalReachable) rules.push(`goto ${n.externalPolicyChain}`);
  return rules;
}

function firewallRule(plan: ServicePortPlan, ctx: RenderContext): string {
  const ranges = plan.service.loadBalancerSourceRanges;
  let sources = ranges.join(' , ');
  const nodeIP = ctx.nodeIP;
  const allowNode = nodeIP !== null && ranges.some((r) => cidrContains(r, nodeIP));
  // A VIP-like load balancer's IP is often local: the node's own requests then arrive from the VIP.
  if (allowNode) for (const ip of plan.loadBalancerIPs) sources += ` , ${ip}`;
  return `${ctx.family} saddr != { ${sources} } drop`;
}

/** Endpoint chains exist only under ClientIP affinity: the affinity set is updated on the way to the endpoint. */
function writeEndpointChains(plan: ServicePortPlan, ctx: RenderContext, n: PortNames, chains: ChainContent[]): void {
  if (!plan.sessionAffinity) return;
  const ipX = ctx.family;
  for (const ep of plan.reachableEndpoints) {
    const rules = [`update @${affinitySetName(ctx, n, ep)} { ${ipX} saddr }`, `meta l4proto ${n.protocol} dnat to ${ep.key}`];
    chains.push({ name: endpointChain(ctx, n, ep), rules });
  }
}

/** Flattens every string a render keeps (names, rules, element keys and values); returns it. */
function flattenRender(render: ServicePortRender): ServicePortRender {
  for (const c of render.chains) {
    flatString(c.name);
    for (const r of c.rules) flatString(r);
  }
  for (const a of render.affinitySets) flatString(a.name);
  for (const e of render.elements) {
    flatString(e.key);
    if (e.value !== undefined) flatString(e.value);
  }
  return render;
}
