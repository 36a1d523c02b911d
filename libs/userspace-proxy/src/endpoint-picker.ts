import type { Clock } from '@kube-proxy/core';

/** Where a proxy socket may send a client: one endpoint of its service port. */
export interface ProxyTarget {
  readonly ip: string;
  readonly port: number;
  /** `ip:port` (IPv6 bracketed): the endpoint's identity across updates. */
  readonly key: string;
}

interface Affinity {
  endpoint: ProxyTarget;
  lastUsed: number;
}

/**
 * Round robin over one service port's endpoints, with ClientIP session affinity (upstream's
 * userspace LoadBalancerRR, per service port). The endpoint list is whatever core decided this
 * traffic may use (ready endpoints, or serving+terminating ones when none is ready), so this class
 * only chooses among them.
 */
export class EndpointPicker {
  private endpoints: readonly ProxyTarget[] = [];
  private index = 0;
  private affinityTimeoutMs = 0;
  private readonly affinity = new Map<string, Affinity>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.endpoints.length;
  }

  /** The endpoints in round-robin order. */
  get targets(): readonly ProxyTarget[] {
    return this.endpoints;
  }

  get affinityEntries(): number {
    return this.affinity.size;
  }

  /**
   * Replaces the endpoint list (order matters for round robin; callers pass it sorted). Affinity
   * entries pointing at endpoints that are gone are dropped; when the list did not change the round
   * robin position is kept, so a resync does not reset the distribution.
   */
  update(endpoints: readonly ProxyTarget[], affinityTimeoutSeconds: number): void {
    const timeoutMs = affinityTimeoutSeconds > 0 ? affinityTimeoutSeconds * 1000 : 0;
    if (timeoutMs === 0) this.affinity.clear();
    this.affinityTimeoutMs = timeoutMs;
    if (sameTargets(this.endpoints, endpoints)) return;
    this.endpoints = endpoints;
    if (this.index >= endpoints.length) this.index = 0;
    if (this.affinity.size > 0) {
      const keys = new Set(endpoints.map((e) => e.key));
      for (const [client, entry] of this.affinity) if (!keys.has(entry.endpoint.key)) this.affinity.delete(client);
    }
  }

  /**
   * The endpoint for a new connection from `clientIP`. `resetAffinity` (a retry after a failed
   * connect) ignores the client's sticky endpoint and moves on, as upstream's NextEndpoint did.
   * `avoid` (the endpoints this connection already failed on) is skipped while another endpoint
   * remains: the rotation is shared by all connections, so without it a retry could land on the same
   * dead endpoint again when other clients moved the index meanwhile. Undefined when the service port
   * has no endpoints.
   */
  next(clientIP: string, resetAffinity = false, avoid?: ReadonlySet<string>): ProxyTarget | undefined {
    const count = this.endpoints.length;
    if (count === 0) return undefined;
    const now = this.clock.now();
    if (this.affinityTimeoutMs > 0 && !resetAffinity) {
      const sticky = this.affinity.get(clientIP);
      if (sticky && now - sticky.lastUsed < this.affinityTimeoutMs) {
        sticky.lastUsed = now;
        return sticky.endpoint;
      }
    }
    let endpoint = this.endpoints[this.index] as ProxyTarget;
    if (avoid !== undefined && avoid.size > 0) {
      for (let i = 0; i < count && avoid.has(endpoint.key); i++) {
        this.index = (this.index + 1) % count;
        endpoint = this.endpoints[this.index] as ProxyTarget;
      }
    }
    this.index = (this.index + 1) % count;
    if (this.affinityTimeoutMs > 0) {
      const entry = this.affinity.get(clientIP);
      if (entry) {
        entry.endpoint = endpoint;
        entry.lastUsed = now;
      } else {
        this.affinity.set(clientIP, { endpoint, lastUsed: now });
      }
    }
    return endpoint;
  }

  /** Drops expired affinity entries (called on every sync, so the map stays bounded by live clients). */
  sweep(): void {
    if (this.affinity.size === 0) return;
    const now = this.clock.now();
    for (const [client, entry] of this.affinity) {
      if (now - entry.lastUsed >= this.affinityTimeoutMs) this.affinity.delete(client);
    }
  }
}

function sameTargets(a: readonly ProxyTarget[], b: readonly ProxyTarget[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] as ProxyTarget).key !== (b[i] as ProxyTarget).key) return false;
  return true;
}
