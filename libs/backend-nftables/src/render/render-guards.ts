/**
 * Defence in depth for the nft text: the source edge validates objects as the API server does, so
 * the names that reach the renderer are DNS labels and IANA service names, and the addresses
 * core's canonical text. A service port with anything else (a bug, a future source) is refused
 * here, before one of its strings could end a chain name, a comment or a line of the transaction;
 * the proxier skips it with a log line and every other service keeps syncing.
 */
import { canonicalIP, parseCIDR, type Endpoint, type ServicePort } from '@kube-proxy/core';

export class UnsafeNftTextError extends Error {}

const NAME_PART = /^[A-Za-z0-9._-]*$/;

function name(what: string, value: string): void {
  if (!NAME_PART.test(value) || value.length > 253) throw new UnsafeNftTextError(`${what} ${JSON.stringify(value)} is not a Kubernetes name`);
}

function ip(what: string, value: string): void {
  if (canonicalIP(value) !== value) throw new UnsafeNftTextError(`${what} ${JSON.stringify(value)} is not an IP address in canonical form`);
}

/** Throws UnsafeNftTextError unless every string of `svc` and its endpoints is safe in nft text. */
export function assertRenderable(svc: ServicePort, endpoints: readonly Endpoint[]): void {
  name('namespace', svc.name.namespace);
  name('service name', svc.name.name);
  name('port name', svc.name.port);
  ip('cluster IP', svc.clusterIP);
  for (const a of svc.externalIPs) ip('external IP', a);
  for (const a of svc.loadBalancerVIPs) ip('load-balancer IP', a);
  for (const r of svc.loadBalancerSourceRanges) {
    if (parseCIDR(r) === undefined || !/^[0-9a-fA-F.:/]+$/.test(r)) throw new UnsafeNftTextError(`source range ${JSON.stringify(r)} is not a CIDR`);
  }
  for (const ep of endpoints) ip('endpoint IP', ep.ip);
}

/** A transaction line must stay one line: nft would read a newline, `\r` or NUL as the end of the command. */
export function assertOneLine(line: string): void {
  if (/[\n\r\0]/.test(line)) throw new UnsafeNftTextError(`refusing an nft line with a line break or NUL: ${JSON.stringify(line.slice(0, 120))}`);
}
