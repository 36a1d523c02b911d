/**
 * Node generators: the proxy's own Node with zone / hostname labels, addresses and pod CIDRs
 * (none, one, dual-stack), and invalid ones made by one breaking mutation.
 */
import fc from 'fast-check';
import type { V1Node } from '@kube-proxy/core';
import { invalidCIDR, podCIDR } from './addresses.js';
import { FUZZ_NODE_NAME, FUZZ_ZONES } from './endpoint-slice-arbitrary.js';
import { cloneObject, type FuzzObject, type Mutation } from './fuzz-object.js';
import { hostileString, nonArrayValue, nonObjectValue } from './hostile-strings.js';
import { hostileFor, isDns1123Subdomain, isLabelValue } from './names.js';

export const LABEL_ZONE = 'topology.kubernetes.io/zone';

/** A valid Node named `name` (default: the proxy's own node). */
export function validNode(name = FUZZ_NODE_NAME): fc.Arbitrary<V1Node> {
  return fc
    .record({
      zone: fc.option(fc.constantFrom(...FUZZ_ZONES, 'zone-c'), { nil: undefined }),
      cidrs: fc.oneof(
        fc.constant([] as string[]),
        podCIDR('IPv4').map((c) => [c]),
        podCIDR('IPv6').map((c) => [c]),
        fc.tuple(podCIDR('IPv4'), podCIDR('IPv6')).map(([a, b]) => [a, b]),
      ),
      ip6: fc.boolean(),
    })
    .map(
      (r): V1Node => ({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...(r.zone === undefined ? {} : { [LABEL_ZONE]: r.zone }) },
        },
        spec: r.cidrs.length === 0 ? {} : { podCIDR: r.cidrs[0], podCIDRs: r.cidrs },
        status: {
          addresses: [
            { type: 'InternalIP', address: '192.168.50.1' },
            ...(r.ip6 ? [{ type: 'InternalIP', address: 'fd00:192:168:50::1' }] : []),
            { type: 'Hostname', address: name },
          ],
        },
      }),
    );
}

type Spec = NonNullable<V1Node['spec']>;
const spec = (n: V1Node): Spec => (n.spec ??= {});
const meta = (n: V1Node): NonNullable<V1Node['metadata']> => (n.metadata ??= {});
const labels = (n: V1Node): Record<string, string> => (meta(n).labels ??= {});

/** The breaking mutations of a Node; each one alone makes the API server reject it. */
export const NODE_MUTATIONS: readonly Mutation<V1Node>[] = [
  { name: 'garbage object', fields: [''], value: nonObjectValue(), apply: (_n, v) => v as V1Node },
  { name: 'metadata not an object', fields: ['metadata'], value: nonObjectValue(), apply: (n, v) => void (n.metadata = v as never) },
  { name: 'hostile name', fields: ['metadata.name'], value: hostileFor(isDns1123Subdomain), apply: (n, v) => void (meta(n).name = v as string) },
  { name: 'hostile zone label', fields: ['metadata.labels'], value: hostileFor(isLabelValue), apply: (n, v) => void (labels(n)[LABEL_ZONE] = v as string) },
  {
    name: 'hostile label key',
    fields: ['metadata.labels'],
    value: hostileString().filter((s) => /[^A-Za-z0-9._/-]/.test(s) || s.length > 63),
    apply: (n, v) => void (labels(n)[v as string] = 'x'),
  },
  { name: 'labels not an object', fields: ['metadata.labels'], value: fc.oneof(fc.constant(['a']), hostileString(), fc.constant(7)), apply: (n, v) => void (meta(n).labels = v as never) },
  { name: 'spec not an object', fields: ['spec'], value: nonObjectValue().filter((v) => v !== null), apply: (n, v) => void (n.spec = v as never) },
  { name: 'invalid pod CIDR', fields: ['spec.podCIDR'], value: invalidCIDR(), apply: (n, v) => void Object.assign(spec(n), { podCIDR: v, podCIDRs: [v] }) },
  {
    name: 'two pod CIDRs of one family',
    fields: ['spec.podCIDR'],
    value: fc.constant(['10.244.1.0/24', '10.244.2.0/24']),
    apply: (n, v) => void Object.assign(spec(n), { podCIDR: (v as string[])[0], podCIDRs: v }),
  },
  { name: 'podCIDRs not an array', fields: ['spec.podCIDR'], value: nonArrayValue(), apply: (n, v) => void (spec(n).podCIDRs = v as never) },
];

/** An invalid Node (named as the proxy's node unless the mutation renames it). */
export function invalidNode(name = FUZZ_NODE_NAME): fc.Arbitrary<FuzzObject<unknown>> {
  return fc.tuple(validNode(name), fc.nat()).chain(([node, pick]) => {
    const m = NODE_MUTATIONS[pick % NODE_MUTATIONS.length];
    return m.value.map((v): FuzzObject<unknown> => {
      const copy = cloneObject(node);
      const replaced = m.apply(copy, v);
      return { object: replaced === undefined ? copy : replaced, valid: false, mutation: m.name, fields: m.fields };
    });
  });
}
