import type { V1EndpointSlice } from '@kubernetes/client-node';
import { formatIP, parseIP } from '../model/ip.js';
import { isPortNumber } from '../model/port-number.js';
import { isProtocol, type IPFamily, type Protocol } from '../model/protocol.js';
import { namespacedName } from '../model/service-port-name.js';
import { LABEL_SERVICE_NAME } from '../model/well-known.js';
import type { Logger } from '../../host/logger.js';

/** One port of a slice, validated. */
export interface SlicePort {
  readonly name: string;
  readonly port: number;
  readonly protocol: Protocol;
}

/** One endpoint of a slice, validated, with the API's nil defaults resolved. */
export interface SliceEndpoint {
  readonly ip: string;
  readonly nodeName: string;
  readonly zone: string;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly zoneHints: ReadonlySet<string> | null;
  readonly nodeHints: ReadonlySet<string> | null;
}

/**
 * The part of an EndpointSlice kube-proxy acts on. Keeping only this (instead of the whole object)
 * keeps memory small and makes "did this update change anything?" a cheap comparison that ignores
 * resourceVersion, managedFields, targetRef and the like.
 */
export interface SliceInfo {
  readonly ports: readonly SlicePort[];
  readonly endpoints: readonly SliceEndpoint[];
}

/** Where a slice is cached: under its Service's namespaced name, then under its own name. */
export interface SliceKeys {
  readonly service: string;
  readonly slice: string;
}

/** The addressType of the slices a proxier of `family` consumes. */
export function addressTypeOf(family: IPFamily): string {
  return family;
}

/** The slice's cache keys, or undefined when it lacks a service-name label, a name or a namespace. */
export function endpointSliceKeys(slice: V1EndpointSlice): SliceKeys | undefined {
  const meta = slice?.metadata;
  const serviceName = meta?.labels?.[LABEL_SERVICE_NAME];
  if (typeof serviceName !== 'string' || serviceName === '') return undefined;
  if (typeof meta?.namespace !== 'string' || meta.namespace === '') return undefined;
  if (typeof meta.name !== 'string' || meta.name === '') return undefined;
  return { service: namespacedName(meta.namespace, serviceName), slice: meta.name };
}

/**
 * Extracts the SliceInfo of a slice whose addressType already matched `family`. Bad ports and bad
 * endpoints are dropped with a warning; the rest of the slice is kept.
 */
export function endpointSliceInfo(slice: V1EndpointSlice, family: IPFamily, logger: Logger): SliceInfo {
  const ref = sliceRef(slice);
  const ports: SlicePort[] = [];
  const rawPorts = Array.isArray(slice.ports) ? slice.ports : [];
  rawPorts.forEach((p, i) => {
    const field = `ports[${i}]`;
    // A nil name cannot be matched to any Service port (the controller always writes one, maybe "").
    if (typeof p?.name !== 'string') {
      logger.warn('Ignoring EndpointSlice port without a name', { endpointSlice: ref, field: `${field}.name` });
      return;
    }
    if (!isPortNumber(p.port)) {
      logger.warn('Ignoring EndpointSlice port with an invalid port number', {
        endpointSlice: ref,
        field: `${field}.port`,
        value: p.port,
      });
      return;
    }
    const protocol = p.protocol === undefined || p.protocol === null || p.protocol === '' ? 'TCP' : p.protocol;
    if (!isProtocol(protocol)) {
      logger.warn('Ignoring EndpointSlice port with an unsupported protocol', {
        endpointSlice: ref,
        field: `${field}.protocol`,
        value: p.protocol,
      });
      return;
    }
    ports.push({ name: p.name, port: p.port, protocol });
  });

  const endpoints: SliceEndpoint[] = [];
  const rawEndpoints = Array.isArray(slice.endpoints) ? slice.endpoints : [];
  rawEndpoints.forEach((ep, i) => {
    const field = `endpoints[${i}].addresses`;
    const address = Array.isArray(ep?.addresses) ? ep.addresses[0] : undefined;
    if (typeof address !== 'string' || address === '') {
      logger.warn('Ignoring endpoint without an address', { endpointSlice: ref, field });
      return;
    }
    const ip = parseIP(address);
    if (ip === undefined || ip.family !== family) {
      logger.warn('Ignoring endpoint with an invalid address', { endpointSlice: ref, field, value: address, family });
      return;
    }
    const conditions = ep.conditions;
    endpoints.push({
      ip: formatIP(ip),
      nodeName: typeof ep.nodeName === 'string' ? ep.nodeName : '',
      zone: typeof ep.zone === 'string' ? ep.zone : '',
      ready: conditions?.ready !== false,
      serving: conditions?.serving !== false,
      terminating: conditions?.terminating === true,
      zoneHints: hintNames(ep.hints?.forZones),
      nodeHints: hintNames(ep.hints?.forNodes),
    });
  });

  return { ports, endpoints };
}

export function sliceInfoEquals(a: SliceInfo, b: SliceInfo): boolean {
  if (a === b) return true;
  if (a.ports.length !== b.ports.length || a.endpoints.length !== b.endpoints.length) return false;
  for (let i = 0; i < a.ports.length; i++) {
    const x = a.ports[i];
    const y = b.ports[i];
    if (x.name !== y.name || x.port !== y.port || x.protocol !== y.protocol) return false;
  }
  for (let i = 0; i < a.endpoints.length; i++) {
    const x = a.endpoints[i];
    const y = b.endpoints[i];
    if (
      x.ip !== y.ip ||
      x.nodeName !== y.nodeName ||
      x.zone !== y.zone ||
      x.ready !== y.ready ||
      x.serving !== y.serving ||
      x.terminating !== y.terminating ||
      !sameSet(x.zoneHints, y.zoneHints) ||
      !sameSet(x.nodeHints, y.nodeHints)
    ) {
      return false;
    }
  }
  return true;
}

function sliceRef(slice: V1EndpointSlice): string {
  return namespacedName(slice.metadata?.namespace ?? '', slice.metadata?.name ?? '');
}

/** Empty hint lists count as no hints, as upstream only builds a set for a non-empty list. */
function hintNames(list: ReadonlyArray<{ name: string }> | undefined): ReadonlySet<string> | null {
  if (!Array.isArray(list) || list.length === 0) return null;
  const names = new Set<string>();
  for (const item of list) if (typeof item?.name === 'string') names.add(item.name);
  return names.size === 0 ? null : names;
}

function sameSet(a: ReadonlySet<string> | null, b: ReadonlySet<string> | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.size !== b.size) return false;
  for (const v of a) if (!b.has(v)) return false;
  return true;
}
