/**
 * parseIpAddrShow: `ip -o -f inet|inet6 addr show dev kube-ipvs0` output → the plain addresses
 * bound there (no prefix length), re-canonicalised with core's canonicalIP, sorted. iproute2 6.1's
 * one-line form in the QEMU guest (fixtures in the spec):
 *   2: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\       valid_lft forever preferred_lft forever
 *   2: kube-ipvs0    inet6 fd00:10:96::a/128 scope global \       valid_lft forever preferred_lft forever
 * `ip -j` would do as well on this iproute2, but the one-line form is what every iproute2 prints,
 * so the reader does not depend on the version. A missing link is not an error of the parser:
 * isMissingDevice recognises ip's `Device "kube-ipvs0" does not exist.` so the caller can answer null.
 */
import { canonicalIP, type IPFamily } from '@kube-proxy/core';

export class IpAddrParseError extends Error {
  constructor(lineNo: number, line: string, why: string) {
    super(`ip addr show line ${lineNo} ${JSON.stringify(line.slice(0, 200))}: ${why}`);
    this.name = 'IpAddrParseError';
  }
}

/** The addresses of `family` in `ip -o addr show` text (other families' lines are ignored). */
export function parseIpAddrShow(text: string, family: IPFamily): string[] {
  const want = family === 'IPv4' ? 'inet' : 'inet6';
  const out = new Set<string>();
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const m = /^\d+:\s+\S+\s+(inet6?)\s+(\S+)/.exec(line);
    if (m === null) throw new IpAddrParseError(index + 1, line, 'expected "N: DEV inet|inet6 ADDRESS/PREFIX …"');
    if (m[1] !== want) return;
    const slash = m[2].indexOf('/');
    const address = canonicalIP(slash < 0 ? m[2] : m[2].slice(0, slash));
    if (address === undefined || address.includes(':') !== (family === 'IPv6')) throw new IpAddrParseError(index + 1, line, `${m[2]} is not an ${family} address`);
    out.add(address);
  });
  return [...out].sort();
}

/** Whether ip's stderr says the device does not exist (iproute2: `Device "NAME" does not exist.`). */
export function isMissingDevice(stderr: string, device: string): boolean {
  return stderr.includes(`Device "${device}" does not exist`) || stderr.includes(`Cannot find device "${device}"`);
}
