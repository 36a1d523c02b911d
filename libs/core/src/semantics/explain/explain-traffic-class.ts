/*
 * The internal and external traffic classes of one Service port, read off its ServicePortPlan: the
 * endpoints each reaches, those it leaves out, the no-endpoint verdict and masquerading.
 */
import type { Endpoint } from '../model/endpoint.js';
import type { LocalTrafficDetector } from '../local-detect/local-traffic-detector.js';
import { endpointSetOf } from '../plan/plan-service-port.js';
import type { ServicePortPlan } from '../plan/service-port-plan.js';
import type { TopologyMode } from '../topology/categorize-endpoints.js';
import { sortedEndpoints, traceWords } from '../trace/trace-words.js';
import { excludedEndpoints } from './endpoint-exclusion.js';
import type { PortlessEndpoint } from './service-endpoints.js';
import type { MasqueradeExplanation, NoEndpointVerdict, TrafficClassExplanation } from './service-explanation.js';

/** What both classes of one port are explained from. */
export interface ClassInputs {
  readonly plan: ServicePortPlan;
  /** The port's endpoints as the proxier's EndpointsMap holds them. */
  readonly endpoints: readonly Endpoint[];
  readonly portless: readonly PortlessEndpoint[];
  readonly nodeName: string;
  readonly zone: string;
  /** The mode topology hints put cluster-policy traffic in on this node. */
  readonly topology: TopologyMode;
  readonly detector: LocalTrafficDetector;
}

const NOT_EXTERNAL = 'the port has no external IP, load-balancer IP or NodePort: no external traffic arrives';

function hairpin(): string {
  return traceWords.masqueradeHairpin;
}

function internalMasquerade(inp: ClassInputs): MasqueradeExplanation {
  const { plan, detector } = inp;
  if (!plan.internalReachable) return { when: 'never', reasons: ['nothing is reachable, so nothing is masqueraded'] };
  switch (plan.internalMasquerade) {
    case 'all':
      return { when: 'always', reasons: [traceWords.masqueradeAll, hairpin()] };
    case 'off-cluster': {
      let why: string = traceWords.masqueradeOffCluster;
      if (detector.kind === 'cidr') why = `${why} (${detector.cidr})`;
      else if (detector.kind === 'bridge-interface') why = traceWords.masqueradeNotFromPodInterface(detector.interfaceName);
      else if (detector.kind === 'interface-name-prefix') why = traceWords.masqueradeNotFromPodInterface(`${detector.prefix}*`);
      return { when: 'off-cluster-sources', reasons: [why, hairpin()] };
    }
    case 'none':
      return { when: 'never', reasons: [traceWords.noLocalDetector, hairpin()] };
  }
}

function externalMasquerade(plan: ServicePortPlan): MasqueradeExplanation {
  switch (plan.externalMasquerade) {
    case 'all':
      return { when: 'always', reasons: [traceWords.masqueradeExternal, hairpin()] };
    case 'local-sources': {
      const reasons: string[] = [traceWords.masqueradeLocalSource];
      if (plan.podsBypassExternalPolicy) reasons.push(traceWords.podsBypassLocalPolicy);
      reasons.push('external clients keep their source address (externalTrafficPolicy Local)', hairpin());
      return { when: 'node-sources', reasons };
    }
    case 'none':
      return { when: 'never', reasons: [plan.service.externallyAccessible ? 'nothing is reachable, so nothing is masqueraded' : NOT_EXTERNAL] };
  }
}

function noEndpointVerdict(verdict: 'reject' | 'drop' | null, localWords: string, plan: ServicePortPlan): NoEndpointVerdict | null {
  if (verdict === null) return null;
  if (verdict === 'reject') return { verdict: 'REJECT', reason: traceWords.noEndpoints(plan.service.name.key) };
  return { verdict: 'DROP', reason: localWords };
}

function reachedSet(plan: ServicePortPlan, kind: 'cluster' | 'local', reachable: boolean): readonly Endpoint[] {
  return reachable ? endpointSetOf(plan, kind) : [];
}

function topologyOf(inp: ClassInputs, kind: 'cluster' | 'local', set: readonly Endpoint[]): TopologyTag {
  // Topology narrows only the cluster set, and only while it holds ready endpoints.
  if (kind !== 'cluster' || set[0]?.ready !== true) return '';
  return inp.topology;
}

type TopologyTag = TrafficClassExplanation['topology'];

function isFallback(set: readonly Endpoint[]): boolean {
  return set.length > 0 && set.every((ep) => !ep.ready);
}

export function internalClass(inp: ClassInputs): TrafficClassExplanation {
  const { plan } = inp;
  const kind = plan.internalEndpoints;
  const set = reachedSet(plan, kind, plan.internalReachable);
  const servicePort = plan.service.name.key;
  return {
    trafficClass: 'internal',
    policy: kind === 'local' ? 'Local' : 'Cluster',
    applies: true,
    endpoints: sortedEndpoints(set.map((ep) => ep.key)),
    terminatingFallback: isFallback(set),
    topology: topologyOf(inp, kind, set),
    excluded: excludedEndpoints(inp.endpoints, new Set(set.map((ep) => ep.key)), inp.portless, {
      kind,
      policyField: 'internalTrafficPolicy',
      topology: inp.topology,
      nodeName: inp.nodeName,
      zone: inp.zone,
      servicePort,
    }),
    noEndpoints: noEndpointVerdict(plan.internalVerdict, traceWords.noLocalEndpointsInternal(servicePort, inp.nodeName), plan),
    masquerade: internalMasquerade(inp),
    shortCircuitEndpoints: [],
  };
}

export function externalClass(inp: ClassInputs): TrafficClassExplanation {
  const { plan } = inp;
  const kind = plan.externalEndpoints;
  const policy = kind === 'local' ? 'Local' : 'Cluster';
  if (!plan.service.externallyAccessible) {
    const masquerade: MasqueradeExplanation = { when: 'never', reasons: [NOT_EXTERNAL] };
    return { trafficClass: 'external', policy, applies: false, endpoints: [], terminatingFallback: false, topology: '', excluded: [], noEndpoints: null, masquerade, shortCircuitEndpoints: [] };
  }
  const set = reachedSet(plan, kind, plan.externalReachable);
  const servicePort = plan.service.name.key;
  const shortCircuit = kind === 'local' && plan.hasEndpoints ? sortedEndpoints(plan.clusterEndpoints.map((ep) => ep.key)) : [];
  return {
    trafficClass: 'external',
    policy,
    applies: true,
    endpoints: sortedEndpoints(set.map((ep) => ep.key)),
    terminatingFallback: isFallback(set),
    topology: topologyOf(inp, kind, set),
    excluded: excludedEndpoints(inp.endpoints, new Set(set.map((ep) => ep.key)), inp.portless, {
      kind,
      policyField: 'externalTrafficPolicy',
      topology: inp.topology,
      nodeName: inp.nodeName,
      zone: inp.zone,
      servicePort,
    }),
    noEndpoints: noEndpointVerdict(plan.externalVerdict, traceWords.noLocalEndpoints(servicePort, inp.nodeName), plan),
    masquerade: externalMasquerade(plan),
    shortCircuitEndpoints: shortCircuit,
  };
}
