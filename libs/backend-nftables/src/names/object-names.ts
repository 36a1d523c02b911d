/**
 * Names of the per-service objects in the kube-proxy table, as upstream's nftables proxier spells
 * them (servicePortChainNameBase / servicePortEndpointChainNameBase): a prefix, 8 base32 characters
 * of the SHA-256 of the readable part, then the readable part itself, e.g.
 * `service-ULMVA6XW-ns1/svc1/tcp/p80`, `endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80`.
 *
 * Namespace, Service and port names are [a-z0-9-], so they are safe in a chain name as they are;
 * `/` (not allowed in them) separates the parts, and an IPv6 endpoint's `:` becomes `.`.
 */
import { createHash } from 'node:crypto';
import type { Endpoint, ServicePortName } from '@kube-proxy/core';

/** knftables.NameLengthMax. */
export const NAME_LENGTH_MAX = 256;
/** The longest prefix ("endpoint-", "affinity-", …) plus its hyphen, reserved in every name. */
const PREFIX_LENGTH_MAX = 16;
const BASE_LENGTH_MAX = NAME_LENGTH_MAX - PREFIX_LENGTH_MAX;

export const CLUSTER_POLICY_PREFIX = 'service-';
export const LOCAL_POLICY_PREFIX = 'local-';
export const EXTERNAL_PREFIX = 'external-';
export const ENDPOINT_PREFIX = 'endpoint-';
export const AFFINITY_PREFIX = 'affinity-';
export const FIREWALL_PREFIX = 'firewall-';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The first 8 characters of RFC 4648 base32 of `bytes` (they encode exactly its first 5 bytes). */
function base32Prefix8(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < 5; i++) {
    buffer = (buffer << 8) | bytes[i];
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >>> bits) & 31];
    }
  }
  return out;
}

/**
 * `HASH-name`, cut to the base length with "..." (the hash keeps a cut name unique, and tells apart
 * names that differ in one late character, such as two endpoints of one service).
 */
export function hashAndTruncate(name: string): string {
  const hashed = `${base32Prefix8(createHash('sha256').update(name).digest())}-${name}`;
  return hashed.length > BASE_LENGTH_MAX ? `${hashed.slice(0, BASE_LENGTH_MAX - 3)}...` : hashed;
}

/** `HASH-namespace/name/protocol/portName`. */
export function servicePortNameBase(name: ServicePortName): string {
  return hashAndTruncate(`${name.namespace}/${name.name}/${name.protocol.toLowerCase()}/${name.port}`);
}

/** `HASH-namespace/name/protocol/portName__endpointIP/endpointPort` (IPv6 `:` as `.`). */
export function endpointNameBase(name: ServicePortName, endpoint: Pick<Endpoint, 'ip' | 'port'>): string {
  const ip = endpoint.ip.includes(':') ? endpoint.ip.replaceAll(':', '.') : endpoint.ip;
  return hashAndTruncate(`${name.namespace}/${name.name}/${name.protocol.toLowerCase()}/${name.port}__${ip}/${endpoint.port}`);
}

/** Service and endpoint chains hold a `/`; none of the table's fixed chains does. */
export function isServiceChainName(chain: string): boolean {
  return chain.includes('/');
}

export function isAffinitySetName(set: string): boolean {
  return set.startsWith(AFFINITY_PREFIX);
}
