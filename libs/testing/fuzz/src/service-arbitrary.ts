/**
 * Service generators: valid Services of every kind kube-proxy handles (ClusterIP, NodePort,
 * LoadBalancer with ingress IPs and ipMode, ExternalName, headless; IPv4, IPv6 and dual-stack;
 * externalIPs, source ranges, ClientIP affinity, traffic policies, trafficDistribution, topology
 * annotations, healthCheckNodePort) and invalid ones made by one breaking mutation of a valid one.
 */
import fc from 'fast-check';
import type { IPFamily, V1Service } from '@kube-proxy/core';
import { clusterIPFor, externalIP, invalidCIDR, invalidIP, networkCIDR, type AddressPool } from './addresses.js';
import { cloneObject, type FuzzObject, type Mutation } from './fuzz-object.js';
import { garbageValue, hostileString, nonArrayValue, nonObjectValue } from './hostile-strings.js';
import { hostileFor, isDns1035Label, isDns1123Label, isLabelValue, labelValue, portName } from './names.js';

export type ServiceKind = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName' | 'Headless';

const FAMILY_SETS: readonly (readonly IPFamily[])[] = [['IPv4'], ['IPv6'], ['IPv4', 'IPv6'], ['IPv6', 'IPv4']];
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32699;
/** Health check node ports come from a range of their own, so they never collide with node ports. */
const HC_NODE_PORT_MIN = 32700;
const HC_NODE_PORT_MAX = 32767;

export interface ServiceOptions {
  readonly namespace: string;
  readonly name: string;
  /** Index unique among the Services of one pool: makes the cluster IPs unique. */
  readonly index: number;
  readonly pool?: AddressPool;
  /** Restrict the kinds generated (default: all). */
  readonly kinds?: readonly ServiceKind[];
}

interface PortPlan {
  name: string;
  port: number;
  protocol: 'TCP' | 'UDP' | 'SCTP';
  targetPort: number | string;
  nodePort?: number;
}

const portsCache = new Map<string, fc.Arbitrary<PortPlan[]>>();

function servicePorts(count: { min: number; max: number }, withNodePorts: boolean): fc.Arbitrary<PortPlan[]> {
  const key = `${count.min}-${count.max}-${withNodePorts}`;
  let arb = portsCache.get(key);
  if (arb === undefined) portsCache.set(key, (arb = makeServicePorts(count, withNodePorts)));
  return arb;
}

function makeServicePorts(count: { min: number; max: number }, withNodePorts: boolean): fc.Arbitrary<PortPlan[]> {
  return fc.integer(count).chain((n) =>
    fc
      .tuple(
        fc.uniqueArray(fc.integer({ min: 1, max: 65535 }), { minLength: n, maxLength: n }),
        fc.uniqueArray(portName(), { minLength: n, maxLength: n }),
        fc.array(fc.constantFrom<PortPlan['protocol']>('TCP', 'TCP', 'UDP', 'SCTP'), { minLength: n, maxLength: n }),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 65535 }), portName()), { minLength: n, maxLength: n }),
        fc.uniqueArray(fc.integer({ min: NODE_PORT_MIN, max: NODE_PORT_MAX }), { minLength: n, maxLength: n }),
        fc.boolean(),
      )
      .map(([ports, names, protocols, targets, nodePorts, unnamed]) =>
        ports.map((port, i) => ({
          // A single port may be unnamed; several must all be named.
          name: n === 1 && unnamed ? '' : names[i],
          port,
          protocol: protocols[i],
          targetPort: targets[i],
          ...(withNodePorts ? { nodePort: nodePorts[i] } : {}),
        })),
      ),
  );
}

/** The random choices behind one Service of `kind`. */
function makePlan(kind: ServiceKind, pool: AddressPool) {
  const external = kind === 'NodePort' || kind === 'LoadBalancer';
  return fc.record({
    families: fc.constantFrom(...FAMILY_SETS),
    salt: fc.nat(),
    ports: servicePorts({ min: kind === 'Headless' || kind === 'ExternalName' ? 0 : 1, max: 4 }, external),
    externalIPs: fc.array(fc.oneof(externalIP('IPv4', pool), externalIP('IPv6', pool)), { maxLength: 2 }),
    ingress: fc.array(
      fc.oneof(
        fc.record(
          { ip: fc.oneof(externalIP('IPv4', pool), externalIP('IPv6', pool)), ipMode: fc.constantFrom('VIP', 'Proxy') },
          { requiredKeys: ['ip'] },
        ),
        fc.constant({ hostname: 'lb.example.com' }),
      ),
      { maxLength: 3 },
    ),
    sourceRanges: fc.array(fc.oneof(networkCIDR('IPv4'), networkCIDR('IPv6')), { maxLength: 3 }),
    affinity: fc.option(fc.integer({ min: 1, max: 86400 }), { nil: undefined }),
    externalTrafficPolicy: fc.constantFrom('Cluster', 'Local'),
    internalTrafficPolicy: fc.constantFrom('Cluster', 'Local'),
    healthCheckNodePort: fc.integer({ min: HC_NODE_PORT_MIN, max: HC_NODE_PORT_MAX }),
    trafficDistribution: fc.option(fc.constantFrom('PreferClose', 'PreferSameZone', 'PreferSameNode'), { nil: undefined }),
    // Annotation values are free text for the API server: hostile ones are valid objects.
    topologyAnnotation: fc.option(fc.oneof(fc.constantFrom('Auto', 'auto', 'Disabled', ''), hostileString()), { nil: undefined }),
    deprecatedHints: fc.option(fc.constantFrom('Auto', 'disabled'), { nil: undefined }),
    appLabel: labelValue(),
  });
}

type ServicePlan = ReturnType<typeof makePlan> extends fc.Arbitrary<infer T> ? T : never;
const planCache = new Map<string, fc.Arbitrary<ServicePlan>>();

/** makePlan, built once per kind and pool (building arbitraries is not free). */
function servicePlan(kind: ServiceKind, pool: AddressPool): fc.Arbitrary<ServicePlan> {
  const key = `${kind}/${pool}`;
  let arb = planCache.get(key);
  if (arb === undefined) planCache.set(key, (arb = makePlan(kind, pool)));
  return arb;
}

/** A valid Service, as the API server stores it after defaulting. */
export function validService(opts: ServiceOptions): fc.Arbitrary<V1Service> {
  const pool = opts.pool ?? 'good';
  const kinds = opts.kinds ?? ['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer', 'LoadBalancer', 'ExternalName', 'Headless'];
  return fc.constantFrom(...kinds).chain((kind) => {
    const external = kind === 'NodePort' || kind === 'LoadBalancer';
    return servicePlan(kind, pool)
      .map((r): V1Service => {
        const families = kind === 'ExternalName' ? [] : kind === 'Headless' ? r.families.slice(0, 1) : r.families;
        const clusterIPs =
          kind === 'ExternalName' ? [] : kind === 'Headless' ? ['None'] : families.map((f) => clusterIPFor(f, pool, opts.index, r.salt));
        const annotations: Record<string, string> = {};
        if (r.topologyAnnotation !== undefined) annotations['service.kubernetes.io/topology-mode'] = r.topologyAnnotation;
        if (r.deprecatedHints !== undefined) annotations['service.kubernetes.io/topology-aware-hints'] = r.deprecatedHints;
        const type = kind === 'Headless' ? 'ClusterIP' : kind;
        const local = r.externalTrafficPolicy === 'Local';
        // ExternalName and headless Services carry no affinity, external IPs or traffic distribution here.
        const affinity = kind === 'ExternalName' ? undefined : r.affinity;
        const externalIPs = kind === 'ExternalName' || kind === 'Headless' ? [] : r.externalIPs;
        const trafficDistribution = kind === 'ExternalName' ? undefined : r.trafficDistribution;
        return {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { namespace: opts.namespace, name: opts.name, labels: { app: r.appLabel }, annotations },
          spec: {
            type,
            ...(kind === 'ExternalName'
              ? { externalName: 'db.example.com' }
              : {
                  clusterIP: clusterIPs[0],
                  clusterIPs,
                  ipFamilies: [...families],
                  ipFamilyPolicy: families.length === 2 ? 'RequireDualStack' : 'SingleStack',
                  internalTrafficPolicy: r.internalTrafficPolicy,
                }),
            ports: r.ports.map((p) => ({
              ...(p.name === '' ? {} : { name: p.name }),
              port: p.port,
              protocol: p.protocol,
              targetPort: p.targetPort as never,
              ...(p.nodePort === undefined ? {} : { nodePort: p.nodePort }),
            })),
            ...(externalIPs.length > 0 ? { externalIPs } : {}),
            sessionAffinity: affinity === undefined ? 'None' : 'ClientIP',
            ...(affinity === undefined ? {} : { sessionAffinityConfig: { clientIP: { timeoutSeconds: affinity } } }),
            ...(external ? { externalTrafficPolicy: r.externalTrafficPolicy } : {}),
            ...(kind === 'LoadBalancer' && local ? { healthCheckNodePort: r.healthCheckNodePort } : {}),
            ...(kind === 'LoadBalancer' ? { allocateLoadBalancerNodePorts: true } : {}),
            ...(kind === 'LoadBalancer' && r.sourceRanges.length > 0 ? { loadBalancerSourceRanges: r.sourceRanges } : {}),
            ...(trafficDistribution === undefined ? {} : { trafficDistribution }),
          },
          status: kind === 'LoadBalancer' ? { loadBalancer: { ingress: r.ingress } } : { loadBalancer: {} },
        };
      });
  });
}

type Spec = NonNullable<V1Service['spec']>;
const spec = (s: V1Service): Spec => s.spec as Spec;
const meta = (s: V1Service): NonNullable<V1Service['metadata']> => (s.metadata ??= {});
const ports = (s: V1Service): NonNullable<Spec['ports']> => (spec(s).ports ??= []);
const hasPorts = (s: V1Service): boolean => (s.spec?.ports?.length ?? 0) > 0;
const isProxied = (s: V1Service): boolean => s.spec?.type !== 'ExternalName' && s.spec?.clusterIP !== 'None';
const isType =
  (...types: string[]) =>
  (s: V1Service): boolean =>
    types.includes(s.spec?.type ?? '');

/**
 * The breaking mutations of a Service; each one alone makes the API server reject the object, on a
 * field the proxy acts on. Upstream's rules about fields without effect (a Service without ports, a
 * healthCheckNodePort on a ClusterIP Service) are left out: core's validation deliberately does not
 * apply them (see libs/core/src/validation/service.ts), as the proxy ignores those fields.
 */
export const SERVICE_MUTATIONS: readonly Mutation<V1Service>[] = [
  { name: 'garbage object', fields: [''], value: nonObjectValue(), apply: (_s, v) => v as V1Service },
  { name: 'metadata not an object', fields: ['metadata'], value: nonObjectValue(), apply: (s, v) => void (s.metadata = v as never) },
  { name: 'hostile name', fields: ['metadata.name'], value: hostileFor(isDns1035Label), apply: (s, v) => void (meta(s).name = v as string) },
  { name: 'missing name', fields: ['metadata.name'], value: fc.constant(undefined), apply: (s) => void delete meta(s).name },
  { name: 'hostile namespace', fields: ['metadata.namespace'], value: hostileFor(isDns1123Label), apply: (s, v) => void (meta(s).namespace = v as string) },
  { name: 'hostile label value', fields: ['metadata.labels'], value: hostileFor(isLabelValue), apply: (s, v) => void (meta(s).labels = { app: v as string }) },
  // `spec: null` decodes to an empty spec, which only the no-ports rule (not applied by core) refuses.
  { name: 'spec not an object', fields: ['spec'], value: nonObjectValue().filter((v) => v !== null), apply: (s, v) => void (s.spec = v as never) },
  { name: 'unknown type', fields: ['spec.type'], value: fc.oneof(fc.constantFrom('Bogus', 'clusterip', 'NodePort '), hostileString()), apply: (s, v) => void (spec(s).type = v as string) },
  { name: 'ports not an array', fields: ['spec.ports'], applies: isProxied, value: nonArrayValue(), apply: (s, v) => void (spec(s).ports = v as never) },
  {
    name: 'port out of range',
    fields: ['spec.ports'],
    applies: hasPorts,
    value: fc.constantFrom(0, -1, 65536, 1e9, 1.5, '80', null, Number.NaN),
    apply: (s, v) => void (ports(s)[0].port = v as number),
  },
  {
    name: 'unsupported protocol',
    fields: ['spec.ports'],
    applies: hasPorts,
    value: fc.oneof(fc.constantFrom('ICMP', 'tcp', 'TCP ', 42), hostileString()),
    apply: (s, v) => void (ports(s)[0].protocol = v as string),
  },
  { name: 'hostile port name', fields: ['spec.ports'], applies: hasPorts, value: hostileFor(isDns1123Label), apply: (s, v) => void (ports(s)[0].name = v as string) },
  {
    name: 'duplicate port',
    fields: ['spec.ports'],
    applies: hasPorts,
    value: fc.constant(undefined),
    apply: (s) => void ports(s).push(cloneObject(ports(s)[0])),
  },
  {
    name: 'node port out of range',
    fields: ['spec.ports'],
    applies: hasPorts,
    value: fc.constantFrom(65536, 70000, -1, 'x', 1.5),
    apply: (s, v) => void (ports(s)[0].nodePort = v as number),
  },
  {
    name: 'port entry not an object',
    fields: ['spec.ports'],
    applies: hasPorts,
    value: nonObjectValue(),
    apply: (s, v) => void (ports(s)[0] = v as never),
  },
  {
    name: 'invalid cluster IP',
    fields: ['spec.clusterIP'],
    applies: isProxied,
    value: invalidIP(),
    apply: (s, v) => {
      spec(s).clusterIP = v as string;
      spec(s).clusterIPs = [v as string, ...(spec(s).clusterIPs ?? []).slice(1)];
    },
  },
  { name: 'clusterIPs not an array', fields: ['spec.clusterIP'], applies: isProxied, value: nonArrayValue(), apply: (s, v) => void (spec(s).clusterIPs = v as never) },
  {
    name: 'ipFamilies mismatch',
    fields: ['spec.ipFamilies', 'spec.clusterIP', 'spec.ipFamilyPolicy'],
    applies: isProxied,
    value: fc.oneof(fc.constantFrom(['IPv5'], ['ipv4'], ['IPv4', 'IPv4']), hostileString().map((h) => [h])),
    apply: (s, v) => void (spec(s).ipFamilies = v as string[]),
  },
  {
    name: 'invalid external IP',
    fields: ['spec.externalIPs'],
    applies: isProxied,
    value: invalidIP(),
    apply: (s, v) => void (spec(s).externalIPs = [...(spec(s).externalIPs ?? []), v as string]),
  },
  { name: 'externalIPs not an array', fields: ['spec.externalIPs'], applies: isProxied, value: nonArrayValue(), apply: (s, v) => void (spec(s).externalIPs = v as never) },
  {
    name: 'invalid ingress IP',
    fields: ['status.loadBalancer'],
    applies: isType('LoadBalancer'),
    value: invalidIP(),
    apply: (s, v) => void (s.status = { loadBalancer: { ingress: [{ ip: v as string }] } }),
  },
  {
    name: 'invalid ingress ipMode',
    fields: ['status.loadBalancer'],
    applies: isType('LoadBalancer'),
    value: fc.oneof(fc.constantFrom('Bogus', 'vip'), hostileString()),
    apply: (s, v) => void (s.status = { loadBalancer: { ingress: [{ ip: '203.0.113.250', ipMode: v as string }] } }),
  },
  {
    name: 'ingress not an array',
    fields: ['status.loadBalancer'],
    applies: isType('LoadBalancer'),
    value: nonArrayValue(),
    apply: (s, v) => void (s.status = { loadBalancer: { ingress: v as never } }),
  },
  {
    name: 'invalid source range',
    fields: ['spec.loadBalancerSourceRanges'],
    applies: isType('LoadBalancer'),
    value: invalidCIDR(),
    apply: (s, v) => void (spec(s).loadBalancerSourceRanges = [...(spec(s).loadBalancerSourceRanges ?? []), v as string]),
  },
  {
    name: 'unknown session affinity',
    fields: ['spec.sessionAffinity'],
    value: fc.oneof(fc.constantFrom('Sticky', 'clientip'), hostileString()),
    apply: (s, v) => {
      spec(s).sessionAffinity = v as string;
      delete spec(s).sessionAffinityConfig;
    },
  },
  {
    name: 'affinity timeout out of range',
    fields: ['spec.sessionAffinityConfig'],
    applies: isProxied,
    value: fc.constantFrom(0, -1, 86401, 1.5, 'x'),
    apply: (s, v) => {
      spec(s).sessionAffinity = 'ClientIP';
      spec(s).sessionAffinityConfig = { clientIP: { timeoutSeconds: v as number } };
    },
  },
  {
    name: 'unknown external traffic policy',
    fields: ['spec.externalTrafficPolicy'],
    applies: isType('NodePort', 'LoadBalancer'),
    value: fc.oneof(fc.constantFrom('Sideways', 'local'), hostileString()),
    apply: (s, v) => {
      spec(s).externalTrafficPolicy = v as string;
      delete spec(s).healthCheckNodePort;
    },
  },
  {
    name: 'unknown internal traffic policy',
    fields: ['spec.internalTrafficPolicy'],
    applies: isProxied,
    value: fc.oneof(fc.constantFrom('Sideways', 'local'), hostileString()),
    apply: (s, v) => void (spec(s).internalTrafficPolicy = v as string),
  },
  {
    name: 'health check node port out of range',
    fields: ['spec.healthCheckNodePort'],
    applies: isType('LoadBalancer'),
    value: fc.constantFrom(-5, 65536, 70000, 'x'),
    apply: (s, v) => {
      spec(s).externalTrafficPolicy = 'Local';
      spec(s).healthCheckNodePort = v as number;
    },
  },

  {
    // Enum-shaped unknown values (e.g. a newer API server's `PreferFar`) are accepted on purpose: the
    // proxy then routes without preference. Text no API server accepts must be rejected.
    name: 'malformed trafficDistribution',
    fields: ['spec.trafficDistribution'],
    value: hostileString(),
    apply: (s, v) => void (spec(s).trafficDistribution = v as string),
  },
];

export interface InvalidServiceOptions extends ServiceOptions {
  readonly mutations?: readonly Mutation<V1Service>[];
}

/** An invalid Service: a valid one (addresses from the `bad` pool) with one breaking mutation. */
export function invalidService(opts: InvalidServiceOptions): fc.Arbitrary<FuzzObject<unknown>> {
  const mutations = opts.mutations ?? SERVICE_MUTATIONS;
  return fc
    .tuple(validService({ ...opts, pool: 'bad', kinds: opts.kinds ?? ['ClusterIP', 'NodePort', 'LoadBalancer'] }), fc.nat())
    .chain(([svc, pick]) => {
      const usable = mutations.filter((m) => m.applies === undefined || m.applies(svc));
      const m = usable[pick % usable.length];
      return m.value.map((v): FuzzObject<unknown> => {
        const copy = cloneObject(svc);
        const replaced = m.apply(copy, v);
        return { object: replaced === undefined ? copy : replaced, valid: false, mutation: m.name, fields: m.fields };
      });
    });
}

/** Any value at all where a Service is expected (for "never throws"). */
export function garbageService(): fc.Arbitrary<FuzzObject<unknown>> {
  return garbageValue().map((object) => ({ object, valid: false, mutation: 'garbage', fields: [''] }));
}
