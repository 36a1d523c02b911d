/**
 * buildDesiredIpvsState: what upstream's IPVS proxier (pkg/proxy/ipvs/proxier.go, syncProxyRules)
 * would program for one IP family, from core's service plans, as data (see ipvs-state.ts).
 *
 * Per service port, as upstream:
 * - cluster IP: a virtual server with the endpoints of internalTrafficPolicy, the address bound on
 *   kube-ipvs0, an entry in KUBE-CLUSTER-IP;
 * - each external IP: a virtual server with the endpoints of externalTrafficPolicy, bound on
 *   kube-ipvs0 unless it is already one of the node's own addresses, an entry in KUBE-EXTERNAL-IP,
 *   or KUBE-EXTERNAL-IP-LOCAL instead under the Local policy;
 * - each load-balancer IP: the same, in KUBE-LOAD-BALANCER (and KUBE-LOAD-BALANCER-LOCAL under the
 *   Local policy); with source ranges also KUBE-LOAD-BALANCER-FW, one KUBE-LOAD-BALANCER-SOURCE-CIDR
 *   entry per range, and KUBE-LOAD-BALANCER-SOURCE-IP (LB IP as source) when the node IP is in a
 *   range (with or without endpoints, as upstream);
 * - the node port: a virtual server per node IP (never bound), the port in KUBE-NODE-PORT-TCP/UDP
 *   (bitmap) or, for SCTP, `nodeIP,sctp:port` per node IP in KUBE-NODE-PORT-SCTP-HASH, plus the
 *   -LOCAL- set under the Local policy; nothing at all when no node IP is selected;
 * - the health-check node port in KUBE-HEALTH-CHECK-NODE-PORT;
 * - each local endpoint in KUBE-LOOP-BACK (`ip,proto:port,ip`, hairpin masquerade);
 * - KUBE-IPVS-IPS holds the bound addresses.
 * Virtual servers are persistent (-p) with the ClientIP affinity timeout, and carry the mh-port
 * flag under the mh scheduler (upstream's FlagSourceHash). Real servers: weight 1, masquerading.
 *
 * Where this differs from upstream on purpose (sorted order, the first claimant of a shared virtual
 * server, addresses the kernel refuses, ...) is listed in the backend's README.md, "Where we differ
 * from upstream", each difference with the spec that pins it.
 */
import {
  cidrContains,
  endpointSetOf,
  formatIP,
  parseIP,
  planServicePort,
  type Endpoint,
  type EndpointsMap,
  type IPFamily,
  type NodePortAddressSelection,
  type Protocol,
  type ServicePlanContext,
  type ServicePort,
  type ServicePortMap,
  type TopologyGates,
} from '@kube-proxy/core';
import type { IpsetRole } from './ipset-catalogue.js';
import { ipPortEntry, ipPortIPEntry, ipPortNetEntry, portEntry } from './ipset-entry.js';
import type { DesiredIpvsState, SchedulerFlag } from './ipvs-state.js';
import { refusedServiceAddressReason } from './kernel-refused-addresses.js';
import { nodePortIPs } from './node-port-ips.js';
import { StateBuilder, type ServicePortSink } from './state-builder.js';
import { assertScheduler, assertStateCIDR, assertStateIP, assertStatePort, assertStateProtocol } from './state-guards.js';

export interface IpvsStateOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** This node's IP of `family` (lets the node through loadBalancerSourceRanges); null if unknown. */
  readonly nodeIP?: string | null;
  readonly topologyGates?: TopologyGates;
  /** --ipvs-scheduler; empty or absent means rr, as upstream. */
  readonly scheduler?: string;
  /** --masquerade-all and local-traffic detection only shape the plan's masquerade fields (the iptables skeleton's business). */
  readonly masqueradeAll?: boolean;
  readonly localDetection?: boolean;
  /** The resolved --nodeport-addresses (`all` = none given). */
  readonly nodePortAddresses: NodePortAddressSelection;
  /** The node's local addresses (kube-ipvs0's excluded), for node ports when the selection is `all`. */
  readonly localAddresses: readonly string[];
}

export const DEFAULT_IPVS_SCHEDULER = 'rr';

const EMPTY_ENDPOINTS: readonly Endpoint[] = [];

function nodePortRoles(protocol: Protocol): { all: IpsetRole; local: IpsetRole } {
  if (protocol === 'TCP') return { all: 'KUBE-NODE-PORT-TCP', local: 'KUBE-NODE-PORT-LOCAL-TCP' };
  if (protocol === 'UDP') return { all: 'KUBE-NODE-PORT-UDP', local: 'KUBE-NODE-PORT-LOCAL-UDP' };
  return { all: 'KUBE-NODE-PORT-SCTP-HASH', local: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH' };
}

/** What every address of one service port shares. */
interface PortRender {
  readonly b: ServicePortSink;
  readonly protocol: Protocol;
  readonly port: number;
  readonly timeout: number;
  readonly internal: readonly Endpoint[];
  readonly external: readonly Endpoint[];
  readonly local: boolean;
}

/** False (and the address noted as skipped) for a service address IPVS mode cannot serve. */
function servable(b: ServicePortSink, what: string, ip: string): boolean {
  assertStateIP(ip, b.family, what);
  const why = refusedServiceAddressReason(ip);
  if (why !== undefined) b.skip(what, ip, why);
  return why === undefined;
}

function addClusterIP(r: PortRender, clusterIP: string): void {
  if (!servable(r.b, 'cluster IP', clusterIP)) return;
  r.b.entry('KUBE-CLUSTER-IP', ipPortEntry(clusterIP, r.protocol, r.port));
  r.b.virtualServer(r.protocol, clusterIP, r.port, r.timeout, r.internal);
  r.b.bindVip(clusterIP);
}

/** External IPs: Local-policy ones go to the -LOCAL set instead (upstream: either, not both). */
function addExternalIPs(r: PortRender, ips: readonly string[]): void {
  for (const ip of ips) {
    if (!servable(r.b, 'external IP', ip)) continue;
    r.b.entry(r.local ? 'KUBE-EXTERNAL-IP-LOCAL' : 'KUBE-EXTERNAL-IP', ipPortEntry(ip, r.protocol, r.port));
    r.b.virtualServer(r.protocol, ip, r.port, r.timeout, r.external);
    r.b.bindUnlessLocal(ip);
  }
}

/**
 * Load-balancer IPs: always in KUBE-LOAD-BALANCER, also in -LOCAL under the Local policy; the
 * source-range sets regardless of endpoints (upstream), unlike core's plan.firewalled.
 */
function addLoadBalancerIPs(r: PortRender, ips: readonly string[], ranges: readonly string[], nodeIP: string | null): void {
  for (const ip of ips) {
    if (!servable(r.b, 'load-balancer IP', ip)) continue;
    const entry = ipPortEntry(ip, r.protocol, r.port);
    r.b.entry('KUBE-LOAD-BALANCER', entry);
    if (r.local) r.b.entry('KUBE-LOAD-BALANCER-LOCAL', entry);
    if (ranges.length > 0) {
      r.b.entry('KUBE-LOAD-BALANCER-FW', entry);
      let allowFromNode = false;
      for (const cidr of ranges) {
        assertStateCIDR(cidr, r.b.family);
        r.b.entry('KUBE-LOAD-BALANCER-SOURCE-CIDR', ipPortNetEntry(ip, r.protocol, r.port, cidr));
        if (nodeIP !== null && cidrContains(cidr, nodeIP)) allowFromNode = true;
      }
      // The node's own requests to its LB IP come back with the LB IP as source.
      if (allowFromNode) r.b.entry('KUBE-LOAD-BALANCER-SOURCE-IP', ipPortIPEntry(ip, r.protocol, r.port, ip));
    }
    r.b.virtualServer(r.protocol, ip, r.port, r.timeout, r.external);
    r.b.bindUnlessLocal(ip);
  }
}

/** Node port: one virtual server per node IP; nothing when no node IP is selected (as upstream). */
function addNodePort(r: PortRender, nodePort: number, nodeIPs: readonly string[]): void {
  if (nodePort === 0 || nodeIPs.length === 0) return;
  assertStatePort(nodePort, 'node port');
  const roles = nodePortRoles(r.protocol);
  const entries = r.protocol === 'SCTP' ? nodeIPs.map((ip) => ipPortEntry(ip, r.protocol, nodePort)) : [portEntry(nodePort)];
  for (const e of entries) {
    r.b.entry(roles.all, e);
    if (r.local) r.b.entry(roles.local, e);
  }
  for (const ip of nodeIPs) r.b.virtualServer(r.protocol, ip, nodePort, r.timeout, r.external);
}

/** One service port's virtual servers, set entries and binds, written to `b` (the whole state's builder or one port's fragment). */
export function addServicePort(b: ServicePortSink, svc: ServicePort, endpoints: readonly Endpoint[], ctx: ServicePlanContext, nodeIPs: readonly string[]): void {
  assertStateProtocol(svc.protocol);
  assertStatePort(svc.port, 'service port');
  const plan = planServicePort(svc, endpoints, ctx);
  // 'drop' is the plan's verdict for a Local policy without a local endpoint (the metric's meaning).
  if (plan.internalVerdict === 'drop') b.noLocal.internal++;
  if (plan.externalVerdict === 'drop') b.noLocal.external++;
  const r: PortRender = {
    b,
    protocol: svc.protocol,
    port: svc.port,
    timeout: plan.sessionAffinity ? plan.affinitySeconds : 0,
    internal: endpointSetOf(plan, plan.internalEndpoints),
    external: endpointSetOf(plan, plan.externalEndpoints),
    local: plan.service.externalPolicyLocal,
  };
  addClusterIP(r, plan.clusterIP);
  addExternalIPs(r, plan.externalIPs);
  addLoadBalancerIPs(r, plan.loadBalancerIPs, plan.service.loadBalancerSourceRanges, ctx.nodeIP);
  addNodePort(r, plan.nodePort, nodeIPs);

  if (plan.healthCheckNodePort !== 0) {
    assertStatePort(plan.healthCheckNodePort, 'health check node port');
    b.entry('KUBE-HEALTH-CHECK-NODE-PORT', portEntry(plan.healthCheckNodePort));
  }
  // Hairpin: every local endpoint (upstream walks the whole endpoints map entry, ready or not).
  for (const ep of endpoints) {
    if (!ep.isLocal) continue;
    assertStateIP(ep.ip, b.family, 'endpoint IP');
    assertStatePort(ep.port, 'endpoint port');
    b.entry('KUBE-LOOP-BACK', ipPortIPEntry(ep.ip, r.protocol, ep.port, ep.ip));
  }
}

/**
 * The node's IP of `family` in canonical text, or null: it only lets the node through source ranges,
 * so an address the Node object spells oddly (`::ffff:a.b.c.d`, leading zeros) or one of the other
 * family must not fail the sync; the first is read as core reads it, the second lets nothing through.
 */
function familyAddress(ip: string | null, family: IPFamily): string | null {
  const parsed = ip === null ? undefined : parseIP(ip);
  return parsed !== undefined && parsed.family === family ? formatIP(parsed) : null;
}

/** What every service port of one build shares: checked once, from the options. */
export interface PortInputs {
  readonly family: IPFamily;
  readonly scheduler: string;
  readonly flags: readonly SchedulerFlag[];
  readonly ctx: ServicePlanContext;
  /** The node-port addresses (sorted, canonical). */
  readonly nodeIPs: readonly string[];
}

/** The shared inputs of a build, validated (scheduler name, node-port addresses). */
export function portInputs(options: IpvsStateOptions): PortInputs {
  const family = options.family;
  const scheduler = options.scheduler === undefined || options.scheduler === '' ? DEFAULT_IPVS_SCHEDULER : options.scheduler;
  assertScheduler(scheduler);
  const flags: readonly SchedulerFlag[] = scheduler === 'mh' ? ['mh-port'] : [];
  const nodeIP = familyAddress(options.nodeIP ?? null, family);
  const ctx: ServicePlanContext = {
    nodeName: options.nodeName,
    nodeLabels: options.nodeLabels,
    topologyGates: options.topologyGates,
    masqueradeAll: options.masqueradeAll ?? false,
    localDetection: options.localDetection ?? false,
    nodeIP,
  };
  const nodeIPs = nodePortIPs(family, options.nodePortAddresses, options.localAddresses);
  for (const ip of nodeIPs) assertStateIP(ip, family, 'node port address');
  return { family, scheduler, flags, ctx, nodeIPs };
}

/** The endpoints of a service port ([] when it has none). */
export function endpointsOf(endpointsMap: EndpointsMap, key: string): readonly Endpoint[] {
  return endpointsMap.get(key) ?? EMPTY_ENDPOINTS;
}

/** The desired IPVS state of `options.family` for the given services and endpoints (pure; see the header). */
export function buildDesiredIpvsState(serviceMap: ServicePortMap, endpointsMap: EndpointsMap, options: IpvsStateOptions): DesiredIpvsState {
  const inputs = portInputs(options);
  const b = new StateBuilder(inputs.family, inputs.scheduler, inputs.flags, options.localAddresses);
  const keys = [...serviceMap.keys()].sort();
  for (const key of keys) {
    const svc = serviceMap.get(key) as ServicePort;
    if (svc.family !== inputs.family) continue; // a dual-stack Service's other family belongs to the other proxier
    addServicePort(b, svc, endpointsOf(endpointsMap, key), inputs.ctx, inputs.nodeIPs);
  }
  return b.finish();
}
