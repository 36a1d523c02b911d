import type { Endpoint, ServicePortName } from '@kube-proxy/core';
import { flatString } from '../nft/flat-strings.js';
import { endpointNameBase, servicePortNameBase } from './object-names.js';

/**
 * Memoises the hashed name bases: a full sync at 10,000 services × 5 endpoints would otherwise hash
 * 60,000 names per sync. Entries not used since the previous full sync are dropped at the next one,
 * so the cache holds what the table holds.
 */
export class NameCache {
  private services = new Map<string, string>();
  private endpoints = new Map<string, string>();
  private nextServices: Map<string, string> | null = null;
  private nextEndpoints: Map<string, string> | null = null;

  /** Starts a generation: names asked for until endGeneration() are the ones kept. */
  beginGeneration(): void {
    this.nextServices = new Map();
    this.nextEndpoints = new Map();
  }

  endGeneration(): void {
    if (this.nextServices && this.nextEndpoints) {
      this.services = this.nextServices;
      this.endpoints = this.nextEndpoints;
    }
    this.nextServices = this.nextEndpoints = null;
  }

  service(name: ServicePortName): string {
    const key = `${name.key}/${name.protocol}`;
    let base = this.services.get(key);
    if (base === undefined) {
      base = flatString(servicePortNameBase(name));
      this.services.set(key, base);
    }
    this.nextServices?.set(key, base);
    return base;
  }

  endpoint(name: ServicePortName, endpoint: Endpoint): string {
    const key = `${name.key}/${name.protocol}/${endpoint.key}`;
    let base = this.endpoints.get(key);
    if (base === undefined) {
      base = flatString(endpointNameBase(name, endpoint));
      this.endpoints.set(key, base);
    }
    this.nextEndpoints?.set(key, base);
    return base;
  }
}
