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
 * Differences from upstream, on purpose:
 * 1. Order: everything is sorted (upstream walks Go maps); contents are the same.
 * 2. The lbNoNodeAccess entries (LB IPs the node itself may not reach) feed iptables rules only:
 *    they belong to the iptables skeleton (a later step), not to this state.
 * 3. Two service ports claiming the same virtual server (an external IP shared by two Services):
 *    the first by ServicePortName key wins, deterministically; upstream's last-writer flaps.
 * 4. The health-check node port entry is written even when the port's node port has no node IP
 *    to answer on (upstream's `continue` there skips it too, as a side effect).
 * 5. Graceful termination (upstream keeps weight-0 real servers until their connections end) is
 *    the proxier's job, not the desired state's.
 */
import {
  canonicalIP,
  cidrContains,
  endpointSetOf,
  formatIP,
  joinHostPort,
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
import { unbindableReason } from './bindable-address.js';
import { ipsetCatalogue, type IpsetRole } from './ipset-catalogue.js';
import { ipPortEntry, ipPortIPEntry, ipPortNetEntry, portEntry } from './ipset-entry.js';
import type { DesiredIpvsState, RealServer, SchedulerFlag, VirtualServer } from './ipvs-state.js';
import { nodePortIPs } from './node-port-ips.js';
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

interface VirtualServerDraft {
  readonly vs: Omit<VirtualServer, 'realServers'>;
  readonly realServers: Map<string, RealServer>;
}

/** Mutable accumulation of one build; frozen into a DesiredIpvsState at the end. */
class StateBuilder {
  readonly servers = new Map<string, VirtualServerDraft>();
  readonly bind = new Set<string>();
  /** Service addresses kube-ipvs0 cannot hold: served by IPVS, never bound. */
  readonly unbindable = new Set<string>();
  /** The node's own addresses of the family: never bound on kube-ipvs0 (upstream's nodeAddressSet). */
  readonly nodeAddresses: ReadonlySet<string>;
  readonly entries = new Map<IpsetRole, Set<string>>();
  readonly noLocal = { internal: 0, external: 0 };

  constructor(
    readonly family: IPFamily,
    readonly scheduler: string,
    readonly flags: readonly SchedulerFlag[],
    localAddresses: readonly string[],
  ) {
    this.nodeAddresses = new Set(localAddresses.map((ip) => canonicalIP(ip)).filter((ip): ip is string => ip !== undefined));
  }

  /** Binds a service address on kube-ipvs0, unless the kernel refuses it there (bindable-address.ts). */
  bindVip(ip: string): void {
    if (unbindableReason(ip) === undefined) this.bind.add(ip);
    else this.unbindable.add(ip);
  }

  /** Binds an external or load-balancer IP on kube-ipvs0 unless the node already has it. */
  bindUnlessLocal(ip: string): void {
    if (!this.nodeAddresses.has(ip)) this.bindVip(ip);
  }

  entry(role: IpsetRole, entry: string): void {
    let set = this.entries.get(role);
    if (set === undefined) this.entries.set(role, (set = new Set()));
    set.add(entry);
  }

  virtualServer(protocol: Protocol, address: string, port: number, persistenceTimeout: number, endpoints: readonly Endpoint[]): void {
    const key = `${joinHostPort(address, port)}/${protocol}`;
    if (this.servers.has(key)) return; // difference 3
    const realServers = new Map<string, RealServer>();
    for (const ep of endpoints) {
      assertStateIP(ep.ip, this.family, 'endpoint IP');
      assertStatePort(ep.port, 'endpoint port');
      const rsKey = joinHostPort(ep.ip, ep.port);
      if (!realServers.has(rsKey)) realServers.set(rsKey, { address: ep.ip, port: ep.port, weight: 1, key: rsKey });
    }
    this.servers.set(key, { vs: { protocol, address, port, scheduler: this.scheduler, flags: this.flags, persistenceTimeout, key }, realServers });
  }

  finish(): DesiredIpvsState {
    const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    const virtualServers: VirtualServer[] = [...this.servers.values()]
      .map((d) => ({ ...d.vs, realServers: [...d.realServers.values()].sort(byKey) }))
      .sort(byKey);
    for (const ip of this.bind) this.entry('KUBE-IPVS-IPS', ip);
    const ipsets = ipsetCatalogue(this.family).map((set) => ({ set, entries: [...(this.entries.get(set.role) ?? [])].sort() }));
    return {
      family: this.family,
      virtualServers,
      bindAddresses: [...this.bind].sort(),
      ipsets,
      noLocalEndpoints: { ...this.noLocal },
      unbindableAddresses: [...this.unbindable].sort(),
    };
  }
}

function nodePortRoles(protocol: Protocol): { all: IpsetRole; local: IpsetRole } {
  if (protocol === 'TCP') return { all: 'KUBE-NODE-PORT-TCP', local: 'KUBE-NODE-PORT-LOCAL-TCP' };
  if (protocol === 'UDP') return { all: 'KUBE-NODE-PORT-UDP', local: 'KUBE-NODE-PORT-LOCAL-UDP' };
  return { all: 'KUBE-NODE-PORT-SCTP-HASH', local: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH' };
}

function addServicePort(b: StateBuilder, svc: ServicePort, endpoints: readonly Endpoint[], ctx: ServicePlanContext, nodeIPs: readonly string[]): void {
  const family = b.family;
  assertStateProtocol(svc.protocol);
  assertStateIP(svc.clusterIP, family, 'cluster IP');
  assertStatePort(svc.port, 'service port');
  const plan = planServicePort(svc, endpoints, ctx);
  // 'drop' is the plan's verdict for a Local policy without a local endpoint (the metric's meaning).
  if (plan.internalVerdict === 'drop') b.noLocal.internal++;
  if (plan.externalVerdict === 'drop') b.noLocal.external++;
  const protocol = svc.protocol;
  const port = svc.port;
  const timeout = plan.sessionAffinity ? plan.affinitySeconds : 0;
  const internal = endpointSetOf(plan, plan.internalEndpoints);
  const external = endpointSetOf(plan, plan.externalEndpoints);
  const local = plan.service.externalPolicyLocal;

  // Cluster IP.
  b.entry('KUBE-CLUSTER-IP', ipPortEntry(plan.clusterIP, protocol, port));
  b.virtualServer(protocol, plan.clusterIP, port, timeout, internal);
  b.bindVip(plan.clusterIP);

  // External IPs: Local-policy ones go to the -LOCAL set instead (upstream: either, not both).
  for (const ip of plan.externalIPs) {
    assertStateIP(ip, family, 'external IP');
    b.entry(local ? 'KUBE-EXTERNAL-IP-LOCAL' : 'KUBE-EXTERNAL-IP', ipPortEntry(ip, protocol, port));
    b.virtualServer(protocol, ip, port, timeout, external);
    b.bindUnlessLocal(ip);
  }

  // Load-balancer IPs: always in KUBE-LOAD-BALANCER, also in -LOCAL under the Local policy; the
  // source-range sets regardless of endpoints (upstream), unlike core's plan.firewalled.
  const ranges = plan.service.loadBalancerSourceRanges;
  for (const ip of plan.loadBalancerIPs) {
    assertStateIP(ip, family, 'load-balancer IP');
    const entry = ipPortEntry(ip, protocol, port);
    b.entry('KUBE-LOAD-BALANCER', entry);
    if (local) b.entry('KUBE-LOAD-BALANCER-LOCAL', entry);
    if (ranges.length > 0) {
      b.entry('KUBE-LOAD-BALANCER-FW', entry);
      let allowFromNode = false;
      for (const cidr of ranges) {
        assertStateCIDR(cidr, family);
        b.entry('KUBE-LOAD-BALANCER-SOURCE-CIDR', ipPortNetEntry(ip, protocol, port, cidr));
        if (ctx.nodeIP !== null && cidrContains(cidr, ctx.nodeIP)) allowFromNode = true;
      }
      // The node's own requests to its LB IP come back with the LB IP as source.
      if (allowFromNode) b.entry('KUBE-LOAD-BALANCER-SOURCE-IP', ipPortIPEntry(ip, protocol, port, ip));
    }
    b.virtualServer(protocol, ip, port, timeout, external);
    b.bindUnlessLocal(ip);
  }

  // Node port: one virtual server per node IP; nothing when no node IP is selected (as upstream).
  if (plan.nodePort !== 0 && nodeIPs.length > 0) {
    assertStatePort(plan.nodePort, 'node port');
    const roles = nodePortRoles(protocol);
    const entries = protocol === 'SCTP' ? nodeIPs.map((ip) => ipPortEntry(ip, protocol, plan.nodePort)) : [portEntry(plan.nodePort)];
    for (const e of entries) {
      b.entry(roles.all, e);
      if (local) b.entry(roles.local, e);
    }
    for (const ip of nodeIPs) b.virtualServer(protocol, ip, plan.nodePort, timeout, external);
  }

  if (plan.healthCheckNodePort !== 0) {
    assertStatePort(plan.healthCheckNodePort, 'health check node port');
    b.entry('KUBE-HEALTH-CHECK-NODE-PORT', portEntry(plan.healthCheckNodePort));
  }

  // Hairpin: every local endpoint (upstream walks the whole endpoints map entry, ready or not).
  for (const ep of endpoints) {
    if (!ep.isLocal) continue;
    assertStateIP(ep.ip, family, 'endpoint IP');
    assertStatePort(ep.port, 'endpoint port');
    b.entry('KUBE-LOOP-BACK', ipPortIPEntry(ep.ip, protocol, ep.port, ep.ip));
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

/** The desired IPVS state of `options.family` for the given services and endpoints (pure; see the header). */
export function buildDesiredIpvsState(serviceMap: ServicePortMap, endpointsMap: EndpointsMap, options: IpvsStateOptions): DesiredIpvsState {
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

  const b = new StateBuilder(family, scheduler, flags, options.localAddresses);
  const keys = [...serviceMap.keys()].sort();
  for (const key of keys) {
    const svc = serviceMap.get(key) as ServicePort;
    if (svc.family !== family) continue; // a dual-stack Service's other family belongs to the other proxier
    addServicePort(b, svc, endpointsMap.get(key) ?? EMPTY_ENDPOINTS, ctx, nodeIPs);
  }
  return b.finish();
}
