/**
 * Which service addresses kube-ipvs0 can hold. The API server's syntax checks (and ours) let a
 * Service carry any valid IP as an external IP or load-balancer ingress IP; upstream's
 * ValidateNonSpecialIP is policy, not applied by the proxy. Binding one the kernel refuses stops the
 * whole `ip -batch` at that line, so one such Service would fail every sync of its family. Measured
 * with `ip addr add ADDRESS dev <link>` on this project's host kernel (6.x, in a throwaway namespace):
 * - `::/128`: "ipv6: Invalid address"; `::1/128`: "ipv6: Cannot assign loopback address on this
 *   device"; `ff02::5/128` (any ff00::/8): "ipv6: Cannot assign multicast address without
 *   IFA_F_MCAUTOJOIN flag" — refused;
 * - `0.0.0.0/32`: accepted, but never listed back, so every sync would bind it again;
 * - IPv4 loopback, link-local, multicast and 255.255.255.255, IPv6 link-local: accepted and listed.
 * Upstream logs the failed bind of such a virtual server and goes on with the others; here the
 * address is simply not bound (its virtual server and set entries stay: IPVS and ipset take it).
 */
import { cidrContains, parseIP } from '@kube-proxy/core';

/** Why kube-ipvs0 cannot hold `ip` (canonical text), or undefined when it can. */
export function unbindableReason(ip: string): string | undefined {
  const parsed = parseIP(ip);
  if (parsed === undefined) return 'not an IP address';
  if (parsed.bytes.every((b) => b === 0)) return 'the unspecified address';
  if (parsed.family === 'IPv6' && ip === '::1') return 'IPv6 loopback';
  if (parsed.family === 'IPv6' && cidrContains('ff00::/8', parsed)) return 'IPv6 multicast';
  return undefined;
}
