/**
 * Defence in depth for the desired state: every value that reaches ipvsadm or ipset text must be
 * the canonical text core produces (addresses re-formatted by core's parser, integer ports, a known
 * protocol, a scheduler name of letters). Names from the API never reach the state at all. Anything
 * else is refused with core's UnsafeRestoreTextError before a batch line is written, as the iptables
 * renderer does.
 */
import { UnsafeRestoreTextError, canonicalIP, isValidCIDR, type IPFamily, type Protocol } from '@kube-proxy/core';

const PROTOCOLS: ReadonlySet<string> = new Set<Protocol>(['TCP', 'UDP', 'SCTP']);
const SCHEDULER = /^[a-z]{1,15}$/;

/** Throws unless `ip` is canonical text of an address of `family`. */
export function assertStateIP(ip: string, family: IPFamily, what: string): void {
  if (typeof ip !== 'string' || canonicalIP(ip) !== ip || ip.includes(':') !== (family === 'IPv6')) {
    throw new UnsafeRestoreTextError(`ipvs state: ${what} ${JSON.stringify(String(ip).slice(0, 80))} is not a canonical ${family} address`);
  }
}

/** Throws unless `port` is an integer in 1..65535. */
export function assertStatePort(port: number, what: string): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UnsafeRestoreTextError(`ipvs state: ${what} ${String(port).slice(0, 40)} is not a port number`);
}

export function assertStateProtocol(protocol: string): void {
  if (!PROTOCOLS.has(protocol)) throw new UnsafeRestoreTextError(`ipvs state: protocol ${JSON.stringify(String(protocol).slice(0, 40))} is not TCP, UDP or SCTP`);
}

/** Throws unless `cidr` is a valid CIDR of `family` made only of address characters. */
export function assertStateCIDR(cidr: string, family: IPFamily): void {
  if (typeof cidr !== 'string' || !/^[0-9a-fA-F.:]+\/[0-9]{1,3}$/.test(cidr) || !isValidCIDR(cidr) || cidr.includes(':') !== (family === 'IPv6')) {
    throw new UnsafeRestoreTextError(`ipvs state: source range ${JSON.stringify(String(cidr).slice(0, 80))} is not a ${family} CIDR`);
  }
}

/** Throws unless `scheduler` is an IPVS scheduler name (letters only, as the kernel's are). */
export function assertScheduler(scheduler: string): void {
  if (typeof scheduler !== 'string' || !SCHEDULER.test(scheduler)) {
    throw new UnsafeRestoreTextError(`ipvs state: scheduler ${JSON.stringify(String(scheduler).slice(0, 40))} is not an IPVS scheduler name`);
  }
}
