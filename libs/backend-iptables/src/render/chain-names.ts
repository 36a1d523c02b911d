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

const B32_CODES: readonly number[] = Array.from(BASE32_ALPHABET, (c) => c.charCodeAt(0));

/**
 * `prefix` followed by the first 16 characters of the standard base32 encoding of sha256(input).
 * 16 characters × 5 bits = 80 bits = the first 10 bytes, so no padding is ever involved.
 * Built with one String.fromCharCode, so the name is one flat string: concatenating the characters
 * (and then the prefix) made V8 keep each name as a tree of cons strings, ~190 bytes instead of
 * ~50 — 13 MB of a 10k-service proxy's heap, where the cache keeps 90,000 names.
 */
function hashName(prefix: string, input: string): string {
  return nameOf(prefix, hash16Codes(input));
}

/** The character codes of the first 16 base32 characters of sha256(input). */
function hash16Codes(input: string): number[] {
  const d = hash('sha256', input, 'buffer');
  const w0 = d.readInt32BE(0);
  const w1 = d.readInt32BE(4);
  const w2 = d.readInt32BE(8);
  const c = B32_CODES;
  return [
    c[(w0 >>> 27) & 31]!, c[(w0 >>> 22) & 31]!, c[(w0 >>> 17) & 31]!, c[(w0 >>> 12) & 31]!,
    c[(w0 >>> 7) & 31]!, c[(w0 >>> 2) & 31]!, c[((w0 & 3) << 3) | ((w1 >>> 29) & 7)]!, c[(w1 >>> 24) & 31]!,
    c[(w1 >>> 19) & 31]!, c[(w1 >>> 14) & 31]!, c[(w1 >>> 9) & 31]!, c[(w1 >>> 4) & 31]!,
    c[((w1 & 15) << 1) | ((w2 >>> 31) & 1)]!, c[(w2 >>> 26) & 31]!, c[(w2 >>> 21) & 31]!, c[(w2 >>> 16) & 31]!,
  ];
}

/** `prefix` + the characters of `codes`, as one flat string. */
function nameOf(prefix: string, codes: readonly number[]): string {
  if (prefix === '') return String.fromCharCode(...codes);
  const all = new Array<number>(prefix.length + codes.length);
  for (let k = 0; k < prefix.length; k++) all[k] = prefix.charCodeAt(k);
  for (let k = 0; k < codes.length; k++) all[prefix.length + k] = codes[k]!;
  return String.fromCharCode(...all);
}

/** The first 16 characters of the standard base32 encoding of sha256(input), as one flat string. */
function hash16(input: string): string {
  return hashName('', input);
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
  return hashName(SERVICE_CHAIN_PREFIX.SVC, servicePortName + lowerProtocol(protocol));
}

/** KUBE-SVL-XXXX: the service's "Local" traffic policy chain. */
export function servicePortPolicyLocalChainName(servicePortName: string, protocol: string): string {
  return hashName(SERVICE_CHAIN_PREFIX.SVL, servicePortName + lowerProtocol(protocol));
}

/** KUBE-FW-XXXX: the service's loadBalancerSourceRanges chain. */
export function serviceFirewallChainName(servicePortName: string, protocol: string): string {
  return hashName(SERVICE_CHAIN_PREFIX.FW, servicePortName + lowerProtocol(protocol));
}

/** KUBE-EXT-XXXX: the service's external-destinations chain. */
export function serviceExternalChainName(servicePortName: string, protocol: string): string {
  return hashName(SERVICE_CHAIN_PREFIX.EXT, servicePortName + lowerProtocol(protocol));
}

/** KUBE-SEP-XXXX: the chain of one endpoint (`ip:port`, IPv6 bracketed) of one service port. */
export function servicePortEndpointChainName(servicePortName: string, protocol: string, endpoint: string): string {
  return hashName(SERVICE_CHAIN_PREFIX.SEP, servicePortName + lowerProtocol(protocol) + endpoint);
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
      s = { name: hashName(SERVICE_CHAIN_PREFIX.SEP, e.sepPrefix + endpoint), gen, checked: null };
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
      const h = hash16Codes(sepPrefix);
      e = {
        svc: nameOf(SERVICE_CHAIN_PREFIX.SVC, h),
        svl: nameOf(SERVICE_CHAIN_PREFIX.SVL, h),
        ext: nameOf(SERVICE_CHAIN_PREFIX.EXT, h),
        fw: nameOf(SERVICE_CHAIN_PREFIX.FW, h),
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
