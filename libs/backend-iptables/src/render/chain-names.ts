import { hash } from 'node:crypto';
import { commentName } from './comment-name.js';
import { SERVICE_CHAIN_PREFIX } from './constants.js';
import { RenderBuffers } from './line-buffer.js';

/**
 * Per-service chain names, computed exactly as upstream: sha256 of
 * `servicePortName.String() + lower(protocol)` (plus `endpoint.String()` for KUBE-SEP-),
 * base32 (RFC 4648 standard alphabet) encoded, first 16 characters.
 */

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const B32 = BASE32_ALPHABET;

/**
 * The first 16 characters of the standard base32 encoding of sha256(input).
 * 16 characters × 5 bits = 80 bits = the first 10 bytes, so no padding is ever involved.
 */
function hash16(input: string): string {
  // One-shot crypto.hash (no Hash object per call): names are memoised across syncs by
  // ChainNameCache, so this runs once per new service port or endpoint.
  const d = hash('sha256', input, 'buffer');
  const w0 = d.readInt32BE(0);
  const w1 = d.readInt32BE(4);
  const w2 = d.readInt32BE(8);
  // Bits 0..79 of the digest: w0 (32) + w1 (32) + the top 16 bits of w2.
  return (
    B32[(w0 >>> 27) & 31] + B32[(w0 >>> 22) & 31] + B32[(w0 >>> 17) & 31] + B32[(w0 >>> 12) & 31] +
    B32[(w0 >>> 7) & 31] + B32[(w0 >>> 2) & 31] + B32[((w0 & 3) << 3) | ((w1 >>> 29) & 7)] + B32[(w1 >>> 24) & 31] +
    B32[(w1 >>> 19) & 31] + B32[(w1 >>> 14) & 31] + B32[(w1 >>> 9) & 31] + B32[(w1 >>> 4) & 31] +
    B32[((w1 & 15) << 1) | ((w2 >>> 31) & 1)] + B32[(w2 >>> 26) & 31] + B32[(w2 >>> 21) & 31] + B32[(w2 >>> 16) & 31]
  );
}

/** Reference implementation of hash16 via node:crypto (exported for tests). */
export function hash16Reference(input: string): string {
  const d = hash('sha256', input, 'buffer');
  let bits = 0;
  let value = 0;
  let out = '';
  for (let i = 0; i < 10; i++) {
    value = (value << 8) | d[i];
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** @internal hash16, exported for tests. */
export const hash16ForTest = hash16;

const LOWER_PROTOCOL: Readonly<Record<string, string>> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp', tcp: 'tcp', udp: 'udp', sctp: 'sctp' };

/** Lower-case protocol as upstream hashes and writes it (`strings.ToLower(string(protocol))`). */
export function lowerProtocol(protocol: string): string {
  return LOWER_PROTOCOL[protocol] ?? protocol.toLowerCase();
}

/** upstream's portProtoHash: 16-char hash of a service port name and (lower-case) protocol. */
export function portProtoHash(servicePortName: string, protocol: string): string {
  return hash16(servicePortName + lowerProtocol(protocol));
}

/** KUBE-SVC-XXXX: the service's "Cluster" traffic policy chain. */
export function servicePortPolicyClusterChain(servicePortName: string, protocol: string): string {
  return SERVICE_CHAIN_PREFIX.SVC + portProtoHash(servicePortName, protocol);
}

/** KUBE-SVL-XXXX: the service's "Local" traffic policy chain. */
export function servicePortPolicyLocalChainName(servicePortName: string, protocol: string): string {
  return SERVICE_CHAIN_PREFIX.SVL + portProtoHash(servicePortName, protocol);
}

/** KUBE-FW-XXXX: the service's loadBalancerSourceRanges chain. */
export function serviceFirewallChainName(servicePortName: string, protocol: string): string {
  return SERVICE_CHAIN_PREFIX.FW + portProtoHash(servicePortName, protocol);
}

/** KUBE-EXT-XXXX: the service's external-destinations chain. */
export function serviceExternalChainName(servicePortName: string, protocol: string): string {
  return SERVICE_CHAIN_PREFIX.EXT + portProtoHash(servicePortName, protocol);
}

/** KUBE-SEP-XXXX: the chain of one endpoint (`ip:port`, IPv6 bracketed) of one service port. */
export function servicePortEndpointChainName(servicePortName: string, protocol: string, endpoint: string): string {
  return SERVICE_CHAIN_PREFIX.SEP + hash16(servicePortName + lowerProtocol(protocol) + endpoint);
}

/** The four per-service-port chain names plus a few strings derived once per service port. */
export interface ServiceChainNames {
  /** KUBE-SVC-XXXX */
  readonly svc: string;
  /** KUBE-SVL-XXXX */
  readonly svl: string;
  /** KUBE-EXT-XXXX */
  readonly ext: string;
  /** KUBE-FW-XXXX */
  readonly fw: string;
  /** The service port name as rule comments show it (comment-name.ts), computed once. */
  readonly comment: string;
}

/**
 * A memo slot of the renderer's input checks (render-guards.ts): the ServicePort or Endpoint object
 * that last passed them for this entry. ServicePortMap and EndpointsMap keep unchanged objects from
 * sync to sync, so each object is checked once, not on every render.
 */
export interface CheckedSlot {
  checked: object | null;
}

/** One endpoint chain name with its memo slot. */
export interface EndpointChainEntry extends CheckedSlot {
  readonly name: string;
  gen: number;
}

/** Cache entry for one service port (one name + protocol). */
interface ServiceEntry extends ServiceChainNames, CheckedSlot {
  /** Hash input prefix for the endpoint chains: servicePortName + lower(protocol). */
  readonly sepPrefix: string;
  gen: number;
  /** KUBE-SEP names by endpoint key, each with the generation it was last used in. */
  readonly seps: Map<string, EndpointChainEntry>;
  /** Distinct endpoints looked up in the current generation (to decide whether to sweep `seps`). */
  sepsUsed: number;
}

/**
 * Memo of chain names across syncs. sha256 + base32 per endpoint is the most expensive part of a
 * render, and names never change for a given (service port, protocol, endpoint), so the proxier
 * keeps one cache for its lifetime and passes it to every render.
 *
 * Entries not used during a sync are dropped at the end of that sync (generation sweep), so the
 * cache holds at most what the last sync needed. One cache per proxier (per IP family).
 */
export class ChainNameCache {
  /**
   * The renderer's reusable output memory (see RenderBuffers): kept here because this cache is the
   * per-proxier state renderRuleset is given. Not part of the naming API.
   */
  readonly renderBuffers = new RenderBuffers();
  private readonly byProtocol = new Map<string, Map<string, ServiceEntry>>();
  private gen = 0;
  private servicesUsed = 0;
  private serviceCount = 0;

  /** Chain names of a service port; `name` is ServicePortName.key (upstream's String()). */
  service(name: string, protocol: string): ServiceChainNames {
    return this.entry(name, protocol);
  }

  svc(name: string, protocol: string): string {
    return this.entry(name, protocol).svc;
  }

  svl(name: string, protocol: string): string {
    return this.entry(name, protocol).svl;
  }

  ext(name: string, protocol: string): string {
    return this.entry(name, protocol).ext;
  }

  fw(name: string, protocol: string): string {
    return this.entry(name, protocol).fw;
  }

  /** KUBE-SEP name of endpoint `endpoint` (Endpoint.key, `ip:port`) of service port `name`. */
  sep(name: string, protocol: string, endpoint: string): string {
    return this.sepOf(this.entry(name, protocol), endpoint);
  }

  /** @internal hot path for the renderer: the entry returned by service(). */
  sepOf(names: ServiceChainNames, endpoint: string): string {
    return this.sepEntry(names, endpoint).name;
  }

  /** @internal hot path for the renderer: the memo slot of a service port (the entry returned by service()). */
  serviceSlot(names: ServiceChainNames): CheckedSlot {
    return names as ServiceEntry;
  }

  /** @internal hot path for the renderer: the KUBE-SEP name of `endpoint` with its memo slot. */
  sepEntry(names: ServiceChainNames, endpoint: string): EndpointChainEntry {
    const e = names as ServiceEntry;
    const gen = this.gen;
    if (e.gen !== gen) this.touch(e);
    let s = e.seps.get(endpoint);
    if (s === undefined) {
      s = { name: SERVICE_CHAIN_PREFIX.SEP + hash16(e.sepPrefix + endpoint), gen, checked: null };
      e.seps.set(endpoint, s);
      e.sepsUsed++;
    } else if (s.gen !== gen) {
      s.gen = gen;
      e.sepsUsed++;
    }
    return s;
  }

  /** Starts a new generation: call once before a sync's lookups (renderRuleset does). */
  beginSync(): void {
    this.gen++;
    this.servicesUsed = 0;
  }

  /** Drops every entry that was not used since beginSync() (renderRuleset does this at the end). */
  endSync(): void {
    const gen = this.gen;
    if (this.servicesUsed < this.serviceCount) {
      for (const m of this.byProtocol.values()) {
        for (const [k, e] of m) {
          if (e.gen !== gen) {
            m.delete(k);
            this.serviceCount--;
          }
        }
      }
    }
    for (const m of this.byProtocol.values()) {
      for (const e of m.values()) {
        if (e.seps.size > e.sepsUsed) {
          for (const [k, s] of e.seps) if (s.gen !== gen) e.seps.delete(k);
        }
      }
    }
  }

  /** Number of cached service ports and endpoint chain names. */
  get size(): { services: number; endpoints: number } {
    let endpoints = 0;
    for (const m of this.byProtocol.values()) for (const e of m.values()) endpoints += e.seps.size;
    return { services: this.serviceCount, endpoints };
  }

  private touch(e: ServiceEntry): void {
    e.gen = this.gen;
    e.sepsUsed = 0;
    this.servicesUsed++;
  }

  private entry(name: string, protocol: string): ServiceEntry {
    let m = this.byProtocol.get(protocol);
    if (m === undefined) {
      m = new Map();
      this.byProtocol.set(protocol, m);
    }
    let e = m.get(name);
    if (e === undefined) {
      const sepPrefix = name + lowerProtocol(protocol);
      const h = hash16(sepPrefix);
      e = {
        svc: SERVICE_CHAIN_PREFIX.SVC + h,
        svl: SERVICE_CHAIN_PREFIX.SVL + h,
        ext: SERVICE_CHAIN_PREFIX.EXT + h,
        fw: SERVICE_CHAIN_PREFIX.FW + h,
        comment: commentName(name),
        checked: null,
        sepPrefix,
        gen: this.gen,
        seps: new Map(),
        sepsUsed: 0,
      };
      m.set(name, e);
      this.serviceCount++;
      this.servicesUsed++;
    } else if (e.gen !== this.gen) {
      this.touch(e);
    }
    return e;
  }
}
