/**
 * EndpointSlice generators: valid slices (IPv4, IPv6, FQDN; ready/serving/terminating conditions in
 * every combination including unset; zone and node hints; nodeName local or remote; zones; ports
 * matching the Service's or not) and invalid ones made by one breaking mutation of a valid slice.
 */
import fc from 'fast-check';
import type { IPFamily, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { invalidIP, podIP, type AddressPool } from './addresses.js';
import { cloneObject, type FuzzObject, type Mutation } from './fuzz-object.js';
import { hostileString, nonArrayValue, nonObjectValue } from './hostile-strings.js';
import { hostileFor, isDns1123Label, isDns1123Subdomain, isLabelValue, isPortName, portName } from './names.js';

/** The proxy's own node in the fuzz clusters, another node, and the zones they are in. */
export const FUZZ_NODE_NAME = 'node-1';
export const FUZZ_OTHER_NODE = 'node-2';
export const FUZZ_ZONES: readonly string[] = ['zone-a', 'zone-b'];

export type SliceAddressType = IPFamily | 'FQDN';

export interface SliceOptions {
  readonly namespace: string;
  /** The Service this slice belongs to (its kubernetes.io/service-name label). */
  readonly serviceName: string;
  readonly sliceName: string;
  readonly addressType: SliceAddressType;
  /** The Service, when known: slice ports are then mostly derived from its ports. */
  readonly service?: V1Service;
  readonly pool?: AddressPool;
}

interface SlicePortPlan {
  name: string;
  port: number;
  protocol: string;
}

/** Ports as the EndpointSlice controller writes them for `svc` (name, resolved target port, protocol). */
function portsFromService(svc: V1Service | undefined): fc.Arbitrary<SlicePortPlan[]> {
  const ports = Array.isArray(svc?.spec?.ports) ? svc.spec.ports : [];
  if (ports.length === 0) {
    return fc.uniqueArray(fc.record({ name: fc.oneof(fc.constant(''), portName()), port: fc.integer({ min: 1, max: 65535 }), protocol: fc.constantFrom('TCP', 'UDP', 'SCTP') }), {
      minLength: 1,
      maxLength: 2,
      selector: (p) => p.name,
    });
  }
  return fc
    .tuple(fc.array(fc.integer({ min: 1, max: 65535 }), { minLength: ports.length, maxLength: ports.length }), fc.subarray([...ports.keys()], { minLength: 1 }))
    .map(([numbers, keep]) =>
      keep.map((i) => {
        const p = ports[i];
        const target = typeof p.targetPort === 'number' ? p.targetPort : numbers[i];
        return { name: p.name ?? '', port: target, protocol: p.protocol ?? 'TCP' };
      }),
    );
}

function address(type: SliceAddressType, pool: AddressPool): fc.Arbitrary<string> {
  if (type === 'FQDN') return fc.integer({ min: 1, max: 99 }).map((n) => `pod-${n}.example.com`);
  return podIP(type, pool);
}

const optionalBool = (): fc.Arbitrary<boolean | undefined> => fc.option(fc.boolean(), { nil: undefined });

function endpoint(type: SliceAddressType, pool: AddressPool) {
  return fc
    .record(
      {
        address: address(type, pool),
        // Mostly ready, so most Services have endpoints to route to; every combination still occurs.
        ready: fc.option(fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }), { nil: undefined }),
        serving: optionalBool(),
        terminating: optionalBool(),
        nodeName: fc.constantFrom(FUZZ_NODE_NAME, FUZZ_NODE_NAME, FUZZ_OTHER_NODE),
        zone: fc.constantFrom(...FUZZ_ZONES),
        zoneHints: fc.subarray([...FUZZ_ZONES], { minLength: 1 }),
        nodeHints: fc.subarray([FUZZ_NODE_NAME, FUZZ_OTHER_NODE], { minLength: 1 }),
      },
      { requiredKeys: ['address', 'ready', 'serving', 'terminating'] },
    )
    .map((e) => {
      const conditions: Record<string, boolean> = {};
      if (e.ready !== undefined) conditions.ready = e.ready;
      if (e.serving !== undefined) conditions.serving = e.serving;
      if (e.terminating !== undefined) conditions.terminating = e.terminating;
      const hints =
        e.zoneHints === undefined && e.nodeHints === undefined
          ? undefined
          : {
              ...(e.zoneHints ? { forZones: e.zoneHints.map((name) => ({ name })) } : {}),
              ...(e.nodeHints ? { forNodes: e.nodeHints.map((name) => ({ name })) } : {}),
            };
      return {
        addresses: [e.address],
        conditions,
        ...(e.nodeName === undefined ? {} : { nodeName: e.nodeName }),
        ...(e.zone === undefined ? {} : { zone: e.zone }),
        ...(hints === undefined ? {} : { hints }),
      };
    });
}

/** A valid EndpointSlice of one Service. */
export function validEndpointSlice(opts: SliceOptions): fc.Arbitrary<V1EndpointSlice> {
  const pool = opts.pool ?? 'good';
  return fc.tuple(portsFromService(opts.service), fc.array(endpoint(opts.addressType, pool), { maxLength: 5, size: 'medium' })).map(
    ([ports, endpoints]): V1EndpointSlice => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        namespace: opts.namespace,
        name: opts.sliceName,
        labels: { 'kubernetes.io/service-name': opts.serviceName, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      },
      addressType: opts.addressType,
      ports: ports.map((p) => ({ ...(p.name === '' ? { name: '' } : { name: p.name }), port: p.port, protocol: p.protocol })),
      endpoints,
    }),
  );
}

type Endpoints = V1EndpointSlice['endpoints'];
const meta = (s: V1EndpointSlice): NonNullable<V1EndpointSlice['metadata']> => (s.metadata ??= {});
const labels = (s: V1EndpointSlice): Record<string, string> => (meta(s).labels ??= {});
const slicePorts = (s: V1EndpointSlice): NonNullable<V1EndpointSlice['ports']> => (s.ports ??= []);
const hasPorts = (s: V1EndpointSlice): boolean => (s.ports?.length ?? 0) > 0;
const isIPSlice = (s: V1EndpointSlice): boolean => s.addressType === 'IPv4' || s.addressType === 'IPv6';
/** The slice's first endpoint, added when it has none. */
function firstEndpoint(s: V1EndpointSlice): Endpoints[number] {
  if (s.endpoints.length === 0) s.endpoints.push({ addresses: [s.addressType === 'IPv6' ? 'fd00:10:245::1' : s.addressType === 'FQDN' ? 'pod-1.example.com' : '10.245.0.1'] });
  return s.endpoints[0];
}

/** The breaking mutations of an EndpointSlice; each one alone makes the API server reject it. */
export const ENDPOINT_SLICE_MUTATIONS: readonly Mutation<V1EndpointSlice>[] = [
  { name: 'garbage object', fields: [''], value: nonObjectValue(), apply: (_s, v) => v as V1EndpointSlice },
  { name: 'metadata not an object', fields: ['metadata'], value: nonObjectValue(), apply: (s, v) => void (s.metadata = v as never) },
  { name: 'hostile name', fields: ['metadata.name'], value: hostileFor(isDns1123Subdomain), apply: (s, v) => void (meta(s).name = v as string) },
  { name: 'hostile namespace', fields: ['metadata.namespace'], value: hostileFor(isDns1123Label), apply: (s, v) => void (meta(s).namespace = v as string) },
  {
    name: 'hostile service-name label',
    fields: ['metadata.labels'],
    value: hostileFor(isLabelValue),
    apply: (s, v) => void (labels(s)['kubernetes.io/service-name'] = v as string),
  },
  { name: 'unknown addressType', fields: ['addressType'], value: fc.oneof(fc.constantFrom('IPv5', 'ipv4', 'ip'), hostileString()), apply: (s, v) => void (s.addressType = v as string) },
  { name: 'missing addressType', fields: ['addressType'], value: fc.constant(undefined), apply: (s) => void delete (s as { addressType?: string }).addressType },
  { name: 'endpoints not an array', fields: ['endpoints'], value: nonArrayValue(), apply: (s, v) => void (s.endpoints = v as never) },
  { name: 'endpoint not an object', fields: ['endpoints'], value: nonObjectValue(), apply: (s, v) => void (s.endpoints = [v as never]) },
  { name: 'invalid endpoint address', fields: ['endpoints'], applies: isIPSlice, value: invalidIP(), apply: (s, v) => void (firstEndpoint(s).addresses = [v as string]) },
  {
    name: 'address of the other family',
    fields: ['endpoints'],
    applies: isIPSlice,
    value: fc.constant(undefined),
    apply: (s) => void (firstEndpoint(s).addresses = [s.addressType === 'IPv4' ? 'fd00:10:245::7' : '10.245.0.7']),
  },
  { name: 'no endpoint addresses', fields: ['endpoints'], value: fc.constant([]), apply: (s, v) => void (firstEndpoint(s).addresses = v as string[]) },
  { name: 'addresses not an array', fields: ['endpoints'], value: nonArrayValue(), apply: (s, v) => void (firstEndpoint(s).addresses = v as never) },
  {
    name: 'condition of the wrong type',
    fields: ['endpoints'],
    value: fc.constantFrom('yes', 'true', 1, 0, [], {}),
    apply: (s, v) => void (firstEndpoint(s).conditions = { ready: v as boolean }),
  },
  { name: 'hostile nodeName', fields: ['endpoints'], value: hostileFor(isDns1123Subdomain), apply: (s, v) => void (firstEndpoint(s).nodeName = v as string) },
  { name: 'hostile zone', fields: ['endpoints'], value: hostileFor(isLabelValue), apply: (s, v) => void (firstEndpoint(s).zone = v as string) },
  {
    name: 'hostile zone hint',
    fields: ['endpoints'],
    value: hostileFor(isLabelValue),
    apply: (s, v) => void (firstEndpoint(s).hints = { forZones: [{ name: v as string }] }),
  },
  { name: 'ports not an array', fields: ['ports'], value: nonArrayValue(), apply: (s, v) => void (s.ports = v as never) },
  { name: 'port out of range', fields: ['ports'], applies: hasPorts, value: fc.constantFrom(-1, 65536, 1e9, 1.5, '80', Number.NaN), apply: (s, v) => void (slicePorts(s)[0].port = v as number) },
  {
    name: 'unsupported port protocol',
    fields: ['ports'],
    applies: hasPorts,
    value: fc.oneof(fc.constantFrom('ICMP', 'tcp', 7), hostileString()),
    apply: (s, v) => void (slicePorts(s)[0].protocol = v as string),
  },
  {
    name: 'hostile port name',
    fields: ['ports'],
    applies: hasPorts,
    value: hostileFor((x) => isDns1123Label(x) || isPortName(x)),
    apply: (s, v) => void (slicePorts(s)[0].name = v as string),
  },
];

/** An invalid EndpointSlice: a valid one (addresses from the `bad` pool) with one breaking mutation. */
export function invalidEndpointSlice(opts: SliceOptions): fc.Arbitrary<FuzzObject<unknown>> {
  return fc.tuple(validEndpointSlice({ ...opts, pool: 'bad' }), fc.nat()).chain(([slice, pick]) => {
    const usable = ENDPOINT_SLICE_MUTATIONS.filter((m) => m.applies === undefined || m.applies(slice));
    const m = usable[pick % usable.length];
    return m.value.map((v): FuzzObject<unknown> => {
      const copy = cloneObject(slice);
      const replaced = m.apply(copy, v);
      return { object: replaced === undefined ? copy : replaced, valid: false, mutation: m.name, fields: m.fields };
    });
  });
}
