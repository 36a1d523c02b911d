/**
 * A whole fuzz cluster: the proxy's Node, valid Services with their EndpointSlices (of every address
 * type the Service has, plus FQDN ones), invalid Services and slices, slices of invalid Services, and
 * the odd garbage value — the mix a proxy must survive from a hostile or buggy API server.
 */
import fc from 'fast-check';
import type { IPFamily, V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';
import { invalidEndpointSlice, validEndpointSlice, type SliceAddressType } from './endpoint-slice-arbitrary.js';
import { cloneObject, type FuzzObject } from './fuzz-object.js';
import { garbageValue, hostileString } from './hostile-strings.js';
import { dnsLabel, longDnsLabel, namespaceName } from './names.js';
import { invalidNode, validNode } from './node-arbitrary.js';
import { garbageService, invalidService, validService } from './service-arbitrary.js';

export interface FuzzCluster {
  readonly node: FuzzObject<unknown>;
  readonly services: readonly FuzzObject<unknown>[];
  readonly slices: readonly FuzzObject<unknown>[];
}

export interface ClusterOptions {
  readonly maxValidServices?: number;
  readonly maxInvalidServices?: number;
  /** Weight of an invalid Node against a valid one (default 1 : 4). */
  readonly invalidNodeWeight?: number;
  /** Include garbage values (null, numbers, arrays, …) among the objects (default true). */
  readonly garbage?: boolean;
  /**
   * Most Services whose name, namespace and port names are hostile strings but which are otherwise
   * complete, with matching EndpointSlices: what reaches the rule comments when validation is
   * bypassed (default 2). Validation must reject them and their slices.
   */
  readonly maxHostileNamed?: number;
}

const valid = <T>(object: T): FuzzObject<T> => ({ object, valid: true });

function sliceTypes(svc: V1Service): fc.Arbitrary<SliceAddressType[]> {
  const families = (svc.spec?.ipFamilies ?? []) as IPFamily[];
  const base: SliceAddressType[] = families.length > 0 ? [...families] : ['IPv4'];
  // Mostly one slice per family, sometimes two (an endpoint set split over slices) or an FQDN one.
  return fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constant(base) }, { weight: 1, arbitrary: fc.subarray(base) }), fc.boolean(), fc.boolean()).map(([types, split, fqdn]) => [
    ...types,
    ...(split && types.length > 0 ? [types[0]] : []),
    ...(fqdn ? (['FQDN'] as const) : []),
  ]);
}

/**
 * Slices of `svc`. The address type is part of each slice's name: the API server never lets a slice
 * change its addressType, so an update of a slice always keeps it.
 */
function slicesOf(svc: V1Service, kind: 'valid' | 'invalid' | 'of-invalid'): fc.Arbitrary<FuzzObject<unknown>[]> {
  const ns = svc.metadata?.namespace ?? '';
  const name = svc.metadata?.name ?? '';
  return sliceTypes(svc).chain((types) =>
    fc.tuple(
      ...types.map((addressType, i) => {
        const opts = { namespace: ns, serviceName: name, sliceName: `${name}-${kind === 'invalid' ? 'x' : ''}${addressType.toLowerCase()}-${i}`, addressType, service: svc };
        if (kind === 'invalid') return invalidEndpointSlice(opts);
        return validEndpointSlice({ ...opts, pool: kind === 'valid' ? 'good' : 'bad' }).map((s) => valid<unknown>(s as V1EndpointSlice));
      }),
    ),
  );
}

/** A Service with hostile name, namespace and port names, and slices that match them. */
function hostileNamed(index: number): fc.Arbitrary<FuzzObject<unknown>[]> {
  return fc
    .record({
      name: hostileString(),
      namespace: fc.oneof(namespaceName(), hostileString()),
      portNames: fc.array(hostileString(), { minLength: 4, maxLength: 4 }),
      svc: validService({ namespace: 'x', name: 'x', index: 100 + index, pool: 'bad', kinds: ['ClusterIP', 'NodePort', 'LoadBalancer'] }),
    })
    .chain(({ name, namespace, portNames, svc }) => {
      const hostile = cloneObject(svc);
      hostile.metadata = { ...hostile.metadata, name, namespace };
      (hostile.spec?.ports ?? []).forEach((p, i) => (p.name = `${portNames[i]}${i}`));
      const mark = (object: unknown, fields: string[]): FuzzObject<unknown> => ({ object, valid: false, mutation: 'hostile names', fields });
      return slicesOf(hostile, 'of-invalid').map((slices) => [
        mark(hostile, ['metadata', 'spec.ports']),
        ...slices.map((sl) => mark(sl.object, ['metadata', 'ports'])),
      ]);
    });
}

/** One valid Service with its slices (valid ones, sometimes invalid ones too). */
interface ValidUnit {
  readonly ns: string;
  readonly name: string;
  readonly index: number;
  readonly service: FuzzObject<unknown>;
  readonly slices: readonly FuzzObject<unknown>[];
}

function validUnit(g: fc.GeneratorValue, index: number, at?: { ns: string; name: string }): ValidUnit {
  const ns = at?.ns ?? g(namespaceName);
  const base = g(() => fc.oneof({ weight: 9, arbitrary: dnsLabel() }, { weight: 1, arbitrary: longDnsLabel() }));
  // The index makes the name unique: `<base>` may repeat across services.
  const name = at?.name ?? `${base.slice(0, 58)}-${index}`;
  const svc = g(() => validService({ namespace: ns, name, index }));
  const slices = [...g(() => slicesOf(svc, 'valid'))];
  if (g(fc.integer, { min: 0, max: 3 }) === 0) slices.push(...g(() => slicesOf(svc, 'invalid')));
  return { ns, name, index, service: valid(svc), slices };
}

const validNodeObject = (): fc.Arbitrary<FuzzObject<unknown>> => validNode().map((n) => valid<unknown>(n as V1Node));

interface BuiltCluster {
  readonly node: FuzzObject<unknown>;
  readonly units: readonly ValidUnit[];
  /** Everything else: invalid and hostile Services and slices, garbage. */
  readonly otherServices: readonly FuzzObject<unknown>[];
  readonly otherSlices: readonly FuzzObject<unknown>[];
}

function buildCluster(g: fc.GeneratorValue, opts: ClusterOptions): BuiltCluster {
  const garbage = opts.garbage ?? true;
  const node = g(() => fc.oneof({ weight: 4, arbitrary: validNodeObject() }, { weight: opts.invalidNodeWeight ?? 1, arbitrary: invalidNode() }));
  const nValid = g(fc.integer, { min: 1, max: opts.maxValidServices ?? 5 });
  const units = Array.from({ length: nValid }, (_, i) => validUnit(g, i));
  const services: FuzzObject<unknown>[] = [];
  const slices: FuzzObject<unknown>[] = [];
  const nInvalid = g(fc.integer, { min: 0, max: opts.maxInvalidServices ?? 3 });
  for (let i = 0; i < nInvalid; i++) {
    const ns = g(namespaceName);
    const name = `bad-${i}-x`; // valid names end in a digit: never the same
    services.push(g(() => invalidService({ namespace: ns, name, index: i })));
    // Valid slices of the invalid Service: their endpoints must not appear either.
    const baseSvc = g(() => validService({ namespace: ns, name, index: i, pool: 'bad', kinds: ['ClusterIP'] }));
    slices.push(...g(() => slicesOf(baseSvc, 'of-invalid')));
  }
  const nHostile = g(fc.integer, { min: 0, max: opts.maxHostileNamed ?? 2 });
  for (let i = 0; i < nHostile; i++) {
    const [svc, ...own] = g(() => hostileNamed(i));
    services.push(svc);
    slices.push(...own);
  }
  if (garbage && g(fc.boolean)) services.push(g(garbageService));
  if (garbage && g(fc.boolean)) slices.push(g(() => garbageValue().map((object): FuzzObject<unknown> => ({ object, valid: false, mutation: 'garbage', fields: [''] }))));
  return { node, units, otherServices: services, otherSlices: slices };
}

function flatten(b: BuiltCluster): FuzzCluster {
  return {
    node: b.node,
    services: [...b.units.map((u) => u.service), ...b.otherServices],
    slices: [...b.units.flatMap((u) => u.slices), ...b.otherSlices],
  };
}

/** A fuzz cluster. Valid Services have unique namespaced names and unique cluster IPs. */
export function fuzzCluster(opts: ClusterOptions = {}): fc.Arbitrary<FuzzCluster> {
  return fc.gen().map((g) => flatten(buildCluster(g, opts)));
}

/** A cluster before and after one round of changes, for the change trackers. */
export interface FuzzClusterChange {
  readonly before: FuzzCluster;
  readonly after: FuzzCluster;
}

/**
 * A cluster and what it becomes: each valid Service is kept, updated (same name, new spec and
 * slices), deleted with its slices, or keeps its spec while its slices change; new Services appear;
 * the Node may get new labels and pod CIDRs. Rejected objects stay as they were.
 */
export function fuzzClusterChange(opts: ClusterOptions = {}): fc.Arbitrary<FuzzClusterChange> {
  return fc.gen().map((g): FuzzClusterChange => {
    const before = buildCluster(g, opts);
    const units: ValidUnit[] = [];
    for (const u of before.units) {
      const fate = g(fc.constantFrom, 'keep', 'update', 'delete', 'slices');
      if (fate === 'keep') units.push(u);
      else if (fate === 'update') units.push(validUnit(g, u.index, u));
      else if (fate === 'slices') units.push({ ...u, slices: g(() => slicesOf(u.service.object as V1Service, 'valid')) });
    }
    const added = g(fc.integer, { min: 0, max: 2 });
    for (let i = 0; i < added; i++) units.push(validUnit(g, before.units.length + i));
    const node = before.node.valid ? g(() => fc.oneof(fc.constant(before.node), validNodeObject())) : before.node;
    return { before: flatten(before), after: flatten({ ...before, node, units }) };
  });
}
