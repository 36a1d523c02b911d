/**
 * Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), which kubectl relies on once
 * the OpenAPI documents say the server supports it: with Strict, a Service or EndpointSlice field the
 * API does not define is a 400 "strict decoding error", as on the real server. The known fields are
 * those of core/v1 Service and discovery/v1 EndpointSlice (v1.32), checked down to ports and
 * endpoints; free-form maps (labels, annotations, selector) and other kinds are not checked. Warn and
 * Ignore accept everything (the real server would add a Warning header for Warn).
 */
import type { KubeObject } from './object-store.js';

export class FieldValidationError extends Error {
  override readonly name = 'FieldValidationError';
}

/** Known field names at a path; `*` marks a list whose elements have the nested fields. */
type Fields = { readonly [name: string]: Fields | true };

const META: Fields = Object.fromEntries(
  [
    'name',
    'generateName',
    'namespace',
    'selfLink',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'labels',
    'annotations',
    'ownerReferences',
    'finalizers',
    'managedFields',
  ].map((f) => [f, true]),
);

const flat = (...names: string[]): Fields => Object.fromEntries(names.map((n) => [n, true]));

const SCHEMAS: Readonly<Record<string, Fields>> = {
  Service: {
    apiVersion: true,
    kind: true,
    metadata: META,
    spec: {
      ...flat(
        'selector',
        'clusterIP',
        'clusterIPs',
        'type',
        'externalIPs',
        'sessionAffinity',
        'loadBalancerIP',
        'loadBalancerSourceRanges',
        'externalName',
        'externalTrafficPolicy',
        'healthCheckNodePort',
        'publishNotReadyAddresses',
        'sessionAffinityConfig',
        'ipFamilies',
        'ipFamilyPolicy',
        'allocateLoadBalancerNodePorts',
        'loadBalancerClass',
        'internalTrafficPolicy',
        'trafficDistribution',
      ),
      ports: flat('name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort'),
    },
    status: true,
  },
  EndpointSlice: {
    apiVersion: true,
    kind: true,
    metadata: META,
    addressType: true,
    endpoints: {
      ...flat('addresses', 'hostname', 'targetRef', 'deprecatedTopology', 'nodeName', 'zone', 'hints'),
      conditions: flat('ready', 'serving', 'terminating'),
    },
    ports: flat('name', 'protocol', 'port', 'appProtocol'),
  },
};

function unknownFields(value: unknown, fields: Fields, path: string, out: string[]): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => unknownFields(v, fields, `${path}[${i}]`, out));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [k, v] of Object.entries(value)) {
    const sub = fields[k];
    const at = path === '' ? k : `${path}.${k}`;
    if (sub === undefined) out.push(at);
    else if (sub !== true) unknownFields(v, sub, at, out);
  }
}

/** Throws FieldValidationError when `directive` is Strict and `obj` has fields its kind does not define. */
export function validateFields(kind: string, obj: KubeObject, directive: string | null): void {
  if ((directive ?? '').toLowerCase() !== 'strict') return;
  const schema = SCHEMAS[kind];
  if (!schema) return;
  const unknown: string[] = [];
  unknownFields(obj, schema, '', unknown);
  if (unknown.length > 0) {
    throw new FieldValidationError(`${kind} in version "${obj.apiVersion ?? ''}" cannot be handled as a ${kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
  }
}
