/**
 * Defence in depth for renderRuleset: what a ServicePort, Endpoint or option may put into a rule.
 *
 * Core validates objects at the source edge and hands the renderer canonical text (IPs re-formatted
 * by core's parser, protocols from a closed set, port numbers checked), so on a working node none of
 * these checks ever fires. They exist so that the renderer is safe on its own, fed anything:
 * - names (namespace, Service, port name) reach only comments, and only as commentText: valid names
 *   are written byte for byte as upstream does, anything else percent-encoded and cut to fit;
 * - every other value that reaches a rule must look like what core produces (an address, a CIDR, an
 *   `ip:port`, an integer, tcp/udp/sctp); anything else throws UnsafeRestoreTextError, so no
 *   payload is produced (the proxier logs the failed sync and keeps the kernel's current rules);
 * - each ServicePort / Endpoint object is checked once (memo slots of the ChainNameCache entry it
 *   renders into), since the maps keep unchanged objects from sync to sync;
 * - renderRuleset finally checks the payload's bytes (assertRestorePayload): no NUL, no `\r`, no
 *   over-long line, and exactly as many lines as it wrote.
 */
import type { Endpoint, LocalTrafficDetector, ServicePort } from '@kube-proxy/core';
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import type { ChainNameCache, ServiceChainNames } from './chain-names.js';

/** The render options whose text reaches rules (RenderOptions' fields of those names). */
export interface RuleTextOptions {
  readonly masqueradeMark?: string;
  readonly localDetector: LocalTrafficDetector;
  readonly nodePortAddresses: { readonly all: true } | { readonly all: false; readonly ips: readonly string[] };
}

/** Canonical IP text is at most 39 characters (IPv6; core turns IPv4-mapped text into IPv4). */
const IP_TEXT = /^[0-9A-Fa-f.:]{2,39}$/;
const CIDR_TEXT = /^[0-9A-Fa-f.:]{2,39}\/[0-9]{1,3}$/;
const ENDPOINT_TEXT = /^(?:[0-9.]{7,15}|\[[0-9A-Fa-f.:]{2,39}\]):[0-9]{1,5}$/;
const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);
const MARK_TEXT = /^0x[0-9A-Fa-f]{1,8}$/;
/**
 * An interface name (or prefix) from the configuration: at most 15 bytes (IFNAMSIZ - 1), printable
 * ASCII without whitespace, `"` or `\`, so it is one argument; which names Linux accepts is not
 * judged here (dev_valid_name is stricter still).
 */
const INTERFACE_TEXT = /^[\x21\x23-\x5b\x5d-\x7e]{1,15}$/;

function refuse(what: string, value: unknown, owner: string): never {
  throw new UnsafeRestoreTextError(
    `refusing to render ${what} ${JSON.stringify(String(value).slice(0, 120))}${owner ? ` of ${owner}` : ''}: not the canonical text core produces`,
  );
}

function checkIP(value: string, what: string, owner: string): void {
  if (typeof value !== 'string' || !IP_TEXT.test(value)) refuse(what, value, owner);
}

function checkPort(value: number, what: string, owner: string, allowZero: boolean): void {
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1) || value > 65535) refuse(what, value, owner);
}

/** Throws UnsafeRestoreTextError unless every value of `svc` that reaches a rule is canonical text; `owner` names it in the error. */
export function assertRenderableService(svc: ServicePort, owner: string): void {
  if (!PROTOCOLS.has(svc.protocol)) refuse('protocol', svc.protocol, owner);
  checkIP(svc.clusterIP, 'cluster IP', owner);
  for (const ip of svc.externalIPs) checkIP(ip, 'external IP', owner);
  for (const ip of svc.loadBalancerVIPs) checkIP(ip, 'load balancer IP', owner);
  for (const cidr of svc.loadBalancerSourceRanges) {
    if (typeof cidr !== 'string' || !CIDR_TEXT.test(cidr)) refuse('load balancer source range', cidr, owner);
  }
  checkPort(svc.port, 'port', owner, false);
  checkPort(svc.nodePort, 'node port', owner, true);
  checkPort(svc.healthCheckNodePort, 'health check node port', owner, true);
  if (!Number.isInteger(svc.stickyMaxAgeSeconds) || svc.stickyMaxAgeSeconds < 0) refuse('session affinity timeout', svc.stickyMaxAgeSeconds, owner);
}

/** Throws UnsafeRestoreTextError unless the endpoint's IP and `ip:port` key are canonical text. */
export function assertRenderableEndpoint(ep: Endpoint, owner: string): void {
  if (typeof ep.ip !== 'string' || !IP_TEXT.test(ep.ip)) refuse('endpoint IP', ep.ip, owner);
  if (typeof ep.key !== 'string' || !ENDPOINT_TEXT.test(ep.key)) refuse('endpoint', ep.key, owner);
}

/** Throws UnsafeRestoreTextError unless the options that reach rules (mark, detector, node port IPs) are canonical text. */
export function assertRenderableOptions(options: RuleTextOptions): void {
  if (options.masqueradeMark !== undefined && !MARK_TEXT.test(options.masqueradeMark)) refuse('masquerade mark', options.masqueradeMark, '');
  const d = options.localDetector;
  if (d.kind === 'cidr' && !CIDR_TEXT.test(d.cidr)) refuse('local traffic CIDR', d.cidr, '');
  if (d.kind === 'bridge-interface' && !INTERFACE_TEXT.test(d.interfaceName)) refuse('bridge interface', d.interfaceName, '');
  if (d.kind === 'interface-name-prefix' && !INTERFACE_TEXT.test(d.prefix)) refuse('interface name prefix', d.prefix, '');
  if (!options.nodePortAddresses.all) for (const ip of options.nodePortAddresses.ips) checkIP(ip, 'node port address', '');
}

/**
 * assertRenderableService(svc) unless this very object already passed for this service port
 * (`chains` is names.service(svc.name.key, svc.protocol)).
 */
export function checkServiceOnce(names: ChainNameCache, chains: ServiceChainNames, svc: ServicePort): void {
  const slot = names.serviceSlot(chains);
  if (slot.checked === svc) return;
  assertRenderableService(svc, chains.comment);
  slot.checked = svc;
}

/** The KUBE-SEP chain of `ep`, after assertRenderableEndpoint(ep) unless this very object already passed. */
export function checkedEndpointChain(names: ChainNameCache, chains: ServiceChainNames, ep: Endpoint): string {
  const entry = names.sepEntry(chains, ep.key);
  if (entry.checked !== ep) {
    assertRenderableEndpoint(ep, chains.comment);
    entry.checked = ep;
  }
  return entry.name;
}
