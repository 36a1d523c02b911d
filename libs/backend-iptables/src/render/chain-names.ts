import { hash } from 'node:crypto';
import { SERVICE_CHAIN_PREFIX } from './constants.js';
import { RenderBuffers } from './line-buffer.js';

/**
 * Per-service chain names, computed exactly as upstream: sha256 of
 * `servicePortName.String() + lower(protocol)` (plus `endpoint.String()` for KUBE-SEP-),
 * base32 (RFC 4648 standard alphabet) encoded, first 16 characters.
 */

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

// SHA-256 (FIPS 180-4) in plain JS for the short ASCII strings chain names are made of: about twice
// as fast as a node:crypto call per string here, which matters when a cold start hashes 60,000
// endpoints. Verified against node:crypto in chain-names.spec.ts; non-ASCII input goes to node:crypto.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const W = new Int32Array(64);
const DIGEST = new Int32Array(8);
let block = new Uint8Array(256);

/** SHA-256 of an ASCII string into DIGEST (big-endian words); false if `s` is not ASCII. */
function sha256Ascii(s: string): boolean {
  const len = s.length;
  const total = ((len + 9 + 63) >> 6) << 6;
  if (total > block.length) block = new Uint8Array(total * 2);
  const buf = block;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return false;
    buf[i] = c;
  }
  buf.fill(0, len, total);
  buf[len] = 0x80;
  const bits = len * 8;
  buf[total - 4] = bits >>> 24;
  buf[total - 3] = bits >>> 16;
  buf[total - 2] = bits >>> 8;
  buf[total - 1] = bits;
  let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
  for (let b = 0; b < total; b += 64) {
    for (let i = 0; i < 16; i++) {
      const j = b + i * 4;
      W[i] = (buf[j] << 24) | (buf[j + 1] << 16) | (buf[j + 2] << 8) | buf[j + 3];
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15], y = W[i - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    let a = h0, bb = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + bb) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
  }
  DIGEST[0] = h0; DIGEST[1] = h1; DIGEST[2] = h2; DIGEST[3] = h3;
  DIGEST[4] = h4; DIGEST[5] = h5; DIGEST[6] = h6; DIGEST[7] = h7;
  return true;
}

const B32 = BASE32_ALPHABET;

/**
 * The first 16 characters of the standard base32 encoding of sha256(input).
 * 16 characters × 5 bits = 80 bits = the first 10 bytes, so no padding is ever involved.
 */
function hash16(input: string): string {
  let w0: number, w1: number, w2: number;
  if (sha256Ascii(input)) {
    w0 = DIGEST[0];
    w1 = DIGEST[1];
    w2 = DIGEST[2];
  } else {
    const d = hash('sha256', input, 'buffer');
    w0 = d.readInt32BE(0);
    w1 = d.readInt32BE(4);
    w2 = d.readInt32BE(8);
  }
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
}

/** Cache entry for one service port (one name + protocol). */
interface ServiceEntry extends ServiceChainNames {
  /** Hash input prefix for the endpoint chains: servicePortName + lower(protocol). */
  readonly sepPrefix: string;
  gen: number;
  /** KUBE-SEP names by endpoint key, each with the generation it was last used in. */
  readonly seps: Map<string, { readonly name: string; gen: number }>;
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
    const e = names as ServiceEntry;
    const gen = this.gen;
    if (e.gen !== gen) this.touch(e);
    let s = e.seps.get(endpoint);
    if (s === undefined) {
      s = { name: SERVICE_CHAIN_PREFIX.SEP + hash16(e.sepPrefix + endpoint), gen };
      e.seps.set(endpoint, s);
      e.sepsUsed++;
    } else if (s.gen !== gen) {
      s.gen = gen;
      e.sepsUsed++;
    }
    return s.name;
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
