import { topologyGates } from '../topology/topology-gates.js';
import { isFeatureEnabled } from '../../config/feature-gates.js';
import type { Logger } from '../../host/logger.js';
import { NO_LOCAL_DETECTOR, type LocalTrafficDetector } from '../local-detect/local-traffic-detector.js';
import { selectLocalDetector } from '../local-detect/select-local-detector.js';
import { canonicalIP, ipFamilyOf } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import { namespacedName } from '../model/service-port-name.js';
import type { ServicePort } from '../model/service-port.js';
import { servicePortsFromService } from '../model/service-port-from-service.js';
import { serviceType } from '../model/service-policy.js';
import { LABEL_TOPOLOGY_ZONE } from '../model/well-known.js';
import { planNodePortAddresses, type NodePortAddressPlan } from '../plan/node-port-address-plan.js';
import { NODE_PORT_ADDRESSES_PRIMARY } from '../plan/node-port-address-keywords.js';
import { parseNodePortAddresses, resolveNodePortAddresses } from '../plan/node-port-addresses.js';
import { addressesAsInterfaces, NODE_LOOPBACK_ADDRESSES, nodeObjectAddresses } from '../plan/node-port-interfaces.js';
import { planServicePort, type ServicePlanContext } from '../plan/plan-service-port.js';
import { topologyModeFromHints } from '../topology/categorize-endpoints.js';
import { answeringAddresses, nodePortExplanation, proxyModeIngressIPs, sourceRangeExplanation } from './explain-addresses.js';
import type { ExplainInput } from './explain-input.js';
import { externalClass, internalClass } from './explain-traffic-class.js';
import { endpointFacts } from './endpoint-exclusion.js';
import { notingLogger, notProxiedReason, proxiedSummary, unservedFamilyNotes } from './explain-notes.js';
import { familyEndpoints, portlessEndpoints, protocolMismatches, slicesOfService, type FamilyEndpoints } from './service-endpoints.js';
import type { PortExplanation, ServiceExplanation } from './service-explanation.js';

interface NodePortSelection {
  readonly plan: NodePortAddressPlan;
  readonly cidrs: readonly string[];
  /** nftables mode with no nodePortAddresses: the node's primary IP. */
  readonly defaultedToPrimary: boolean;
}

/** What every port of one family is explained against. */
interface FamilyContext {
  readonly input: ExplainInput;
  readonly family: IPFamily;
  readonly plan: ServicePlanContext;
  readonly zone: string;
  readonly endpoints: FamilyEndpoints;
  readonly nodeAddresses: readonly string[];
  /** The local-traffic detector the proxier would use (none in userspace mode). */
  readonly detector: LocalTrafficDetector;
  readonly nodePorts: NodePortSelection;
  readonly logger: Logger;
  readonly notes: string[];
}

/** The node's own addresses, canonical, any family: the caller's, else the Node object's. */
function nodeAddresses(input: ExplainInput): string[] {
  const raw = input.node.addresses ?? nodeObjectAddresses(input.node.object);
  const out: string[] = [];
  for (const text of raw) {
    const ip = canonicalIP(text);
    if (ip !== undefined && !out.includes(ip)) out.push(ip);
  }
  return out;
}

function masqueradeAll(input: ExplainInput): boolean {
  // Upstream keeps one masqueradeAll per mode section; nftables reads its own, the others iptables'.
  return input.config.mode === 'nftables' ? input.config.nftables.masqueradeAll : input.config.iptables.masqueradeAll;
}

/** nodePortAddresses as the mode reads it: nftables mode defaults to the node's primary IPs, as upstream. */
function nodePortAddressesOf(config: ExplainInput['config']): readonly string[] | null {
  const given = config.nodePortAddresses;
  if (config.mode === 'nftables' && (given === null || given.length === 0)) return [NODE_PORT_ADDRESSES_PRIMARY];
  return given;
}

/** Where this family's NodePorts answer, as the mode's proxier resolves it once per sync. */
function nodePortSelection(config: ExplainInput['config'], family: IPFamily, nodeIP: string | null, ofFamily: readonly string[], logger: Logger): NodePortSelection {
  const npa = parseNodePortAddresses(nodePortAddressesOf(config), family, nodeIP ?? undefined, logger);
  // Only the iptables mode serves NodePorts on 127.0.0.0/8 (route_localnet), and only when selected.
  const iptablesMode = config.mode === 'iptables' || config.mode === '';
  const localhostFlag = iptablesMode && config.iptables.localhostNodePorts && npa.containsIPv4Loopback;
  // The node has its loopback interface too (as a dry run's node does), so `localhost` selects 127.0.0.1 / ::1.
  const loopback = NODE_LOOPBACK_ADDRESSES.filter((ip) => ipFamilyOf(ip) === family);
  const selection = resolveNodePortAddresses(npa, addressesAsInterfaces([...ofFamily, ...loopback]));
  // Userspace capture rules match the selected addresses as they are, loopback included (a socket of the
  // proxy answers; no kernel rule stands in the way of 127.0.0.1 or ::1).
  const plan = config.mode === 'userspace'
    ? { allLocalAddresses: selection.all, excludeLoopback: false, addresses: selection.all ? [] : selection.ips, localhostNodePorts: false }
    : planNodePortAddresses(family, selection, localhostFlag);
  const defaultedToPrimary = config.mode === 'nftables' && (config.nodePortAddresses?.length ?? 0) === 0;
  return { plan, cidrs: npa.cidrs, defaultedToPrimary };
}

function familyContext(input: ExplainInput, family: IPFamily, addresses: readonly string[], logger: Logger, notes: string[]): FamilyContext {
  const given = input.node.labels ?? input.node.object?.metadata?.labels ?? {};
  const labels = input.node.zone === undefined ? given : { ...given, [LABEL_TOPOLOGY_ZONE]: input.node.zone };
  const ofFamily = addresses.filter((ip) => ipFamilyOf(ip) === family);
  const nodeIP = input.node.nodeIPs?.[family] ?? ofFamily[0] ?? null;
  const detector = selectLocalDetector(input.config, family, input.node.object?.spec?.podCIDRs, logger);
  const userspace = input.config.mode === 'userspace';
  const plan: ServicePlanContext = {
    nodeName: input.node.name,
    nodeLabels: labels,
    topologyGates: topologyGates(input.config.featureGates),
    // The userspace proxy relays through its own socket: no masquerade rule, no local detection.
    masqueradeAll: userspace ? false : masqueradeAll(input),
    localDetection: userspace ? false : detector.kind !== 'none',
    nodeIP,
  };
  const service = namespacedName(input.service.metadata?.namespace ?? '', input.service.metadata?.name ?? '');
  const slices = slicesOfService(input.endpointSlices, service);
  return {
    input,
    family,
    plan,
    zone: labels[LABEL_TOPOLOGY_ZONE] ?? '',
    endpoints: familyEndpoints(slices, service, family, input.node.name, logger),
    nodeAddresses: ofFamily,
    detector: userspace ? NO_LOCAL_DETECTOR : detector,
    nodePorts: nodePortSelection(input.config, family, nodeIP, ofFamily, logger),
    logger,
    notes,
  };
}

function explainPort(svc: ServicePort, fc: FamilyContext): PortExplanation {
  const { input, family, plan: ctx } = fc;
  const endpoints = fc.endpoints.byPort.get(svc.name.key) ?? [];
  const plan = planServicePort(svc, endpoints, ctx);
  const np = fc.nodePorts;
  const nodePort = nodePortExplanation(svc, np.plan, fc.nodeAddresses, np.cidrs, np.defaultedToPrimary);
  const topology = svc.usesClusterEndpoints ? topologyModeFromHints(endpoints, ctx.nodeName, fc.zone, ctx.topologyGates?.preferSameTrafficDistribution ?? true) : '';
  const classInputs = {
    plan,
    endpoints,
    portless: portlessEndpoints(svc, fc.endpoints.slices),
    nodeName: ctx.nodeName,
    zone: fc.zone,
    topology,
    detector: fc.detector,
  };
  for (const note of protocolMismatches(svc, fc.endpoints.slices)) if (!fc.notes.includes(note)) fc.notes.push(note);
  return {
    servicePort: svc.name.key,
    portName: svc.name.port,
    family,
    protocol: svc.protocol,
    port: svc.port,
    addresses: answeringAddresses(svc, proxyModeIngressIPs(input.service, family), nodePort),
    nodePort,
    trafficClasses: [internalClass(classInputs), externalClass(classInputs)],
    sourceRanges: sourceRangeExplanation(plan),
    healthCheckNodePort: svc.healthCheckNodePort,
    sessionAffinitySeconds: plan.affinitySeconds,
    sliceEndpoints: endpoints.map(endpointFacts),
  };
}

/**
 * What `input.service` means on `input.node`: for each port and IP family, the addresses it answers
 * on, the endpoints each traffic class reaches and those it leaves out (with the reason), masquerading,
 * the source-range firewall, the health-check node port and the no-endpoint verdict. Pure: built
 * through the same code the proxiers use (servicePortsFromService, EndpointSliceCache, planServicePort,
 * planNodePortAddresses), so it says what they program.
 */
export function explainService(input: ExplainInput): ServiceExplanation {
  const svc = input.service;
  const notes: string[] = unservedFamilyNotes(svc, input.families);
  const logger = notingLogger(input.logger, notes);
  const addresses = nodeAddresses(input);
  // The explained configuration's gate, not the process's: explain may describe another node's config.
  const allowExternalIPs = isFeatureEnabled(input.config.featureGates ?? {}, 'AllowServiceExternalIPs');
  const perFamily = input.families.map((family) => {
    const fc = familyContext(input, family, addresses, logger, notes);
    return servicePortsFromService(svc, family, logger, { allowExternalIPs }).map((port) => ({ port, fc }));
  });
  // Spec order, families in the given order within a port.
  const ports: PortExplanation[] = [];
  const longest = Math.max(0, ...perFamily.map((list) => list.length));
  for (let i = 0; i < longest; i++) {
    for (const list of perFamily) {
      const entry = list[i];
      if (entry !== undefined) ports.push(explainPort(entry.port, entry.fc));
    }
  }
  const service = namespacedName(svc.metadata?.namespace ?? '', svc.metadata?.name ?? '');
  const notProxied = ports.length === 0 ? notProxiedReason(svc, input.families) : null;
  return {
    service,
    type: serviceType(svc),
    node: input.node.name,
    mode: input.config.mode,
    families: [...input.families],
    proxied: ports.length > 0,
    reason: notProxied ?? proxiedSummary(service, ports, input.node.name),
    ports,
    notes,
  };
}
