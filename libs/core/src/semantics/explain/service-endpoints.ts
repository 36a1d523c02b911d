/*
 * The endpoints of one Service for one IP family, read from its EndpointSlices through the
 * EndpointSliceCache the proxiers use (same validation, de-duplication and order), plus what that cache
 * drops silently for a port: endpoints of slices that carry no port of the Service port's name.
 */
import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { Logger } from '../../host/logger.js';
import { nullLogger } from '../../host/logger.js';
import type { Endpoint } from '../model/endpoint.js';
import type { IPFamily } from '../model/protocol.js';
import type { ServicePort } from '../model/service-port.js';
import { EndpointSliceCache } from '../tracking/endpoint-slice-cache.js';
import { endpointSliceInfo, endpointSliceKeys, type SliceEndpoint, type SliceInfo } from '../tracking/endpoint-slice-info.js';

/** A slice endpoint a Service port cannot use because its slice has no port of that name. */
export interface PortlessEndpoint {
  readonly endpoint: SliceEndpoint;
  /** The slice's ports, e.g. `metrics/TCP 9090`. */
  readonly slicePorts: string;
}

export interface FamilyEndpoints {
  /** Endpoints per Service port key (`ns/name:port`), as the proxier's EndpointsMap holds them. */
  readonly byPort: ReadonlyMap<string, readonly Endpoint[]>;
  /** The Service's slices of this family, parsed (for what the cache leaves out). */
  readonly slices: readonly SliceInfo[];
}

/** The slices of `namespace/name` (by namespace and service-name label), any address type. */
export function slicesOfService(slices: readonly V1EndpointSlice[], service: string): V1EndpointSlice[] {
  return slices.filter((slice) => endpointSliceKeys(slice)?.service === service);
}

/** The Service's endpoints for `family`, through the proxiers' EndpointSliceCache. */
export function familyEndpoints(slices: readonly V1EndpointSlice[], service: string, family: IPFamily, nodeName: string, logger: Logger): FamilyEndpoints {
  const cache = new EndpointSliceCache({ family, nodeName, logger });
  for (const slice of slices) cache.updatePending(slice, false);
  const current = cache.checkoutChanges().get(service)?.current;
  const byPort = new Map<string, readonly Endpoint[]>();
  for (const [key, port] of current ?? []) byPort.set(key, port.endpoints);
  // Parsed again, quietly: the cache already logged what is wrong with them.
  const parsed = slices.filter((s) => s.addressType === family).map((s) => endpointSliceInfo(s, family, nullLogger));
  return { byPort, slices: parsed };
}

/**
 * Endpoints of slices with no port of `svc`'s name, whose address no slice with such a port lists
 * (the cache only reads a slice's endpoints under the slice's own ports), once per address.
 */
export function portlessEndpoints(svc: ServicePort, slices: readonly SliceInfo[]): PortlessEndpoint[] {
  const servedIPs = new Set<string>();
  for (const info of slices) {
    if (info.ports.some((p) => p.name === svc.name.port)) for (const ep of info.endpoints) servedIPs.add(ep.ip);
  }
  const out: PortlessEndpoint[] = [];
  for (const info of slices) {
    if (info.ports.some((p) => p.name === svc.name.port)) continue;
    const slicePorts = info.ports.length === 0 ? 'no ports' : info.ports.map((p) => `${p.name === '' ? '(unnamed)' : p.name}/${p.protocol} ${p.port}`).join(', ');
    for (const ep of info.endpoints) {
      if (servedIPs.has(ep.ip)) continue;
      servedIPs.add(ep.ip);
      out.push({ endpoint: ep, slicePorts });
    }
  }
  return out;
}

/** Slice ports named like `svc`'s port but of another protocol (the cache keys by name; upstream also by protocol). */
export function protocolMismatches(svc: ServicePort, slices: readonly SliceInfo[]): string[] {
  const out = new Set<string>();
  for (const info of slices) {
    for (const p of info.ports) {
      if (p.name === svc.name.port && p.protocol !== svc.protocol) {
        out.add(`EndpointSlice port ${p.name === '' ? '(unnamed)' : p.name} of ${svc.name.key} is ${p.protocol}, the Service port is ${svc.protocol}`);
      }
    }
  }
  return [...out];
}
