/**
 * Addresses the kernel refuses where IPVS mode would put them. The API's syntax checks (and ours)
 * let a Service carry any valid IP as an external or load-balancer IP and an EndpointSlice any valid
 * IP as an endpoint (upstream's ValidateNonSpecialIP / endpoint-IP rules are policy the proxy does
 * not apply). One refused line stops `ip -batch` and `ipset restore` and makes `ipvsadm --restore`
 * report failure, so one such object would fail every sync of its family; upstream logs the failed
 * netlink call and goes on. Here such an address is left out of that one place, and the proxier
 * reports it. Measured, in the QEMU guest (Debian's 6.1 kernel, ipvsadm 1.31, iproute2 of the
 * guest) and with ipset 7.17 / ip in a throwaway namespace of this project's host kernel:
 * - kube-ipvs0 (`ip addr add`): `::`, `::1` and IPv6 multicast are refused ("RTNETLINK answers:
 *   Cannot assign requested address"); `0.0.0.0/32` is accepted but never listed back (so it would
 *   be bound again every sync); IPv4 loopback, link-local, multicast, 255.255.255.255 and IPv6
 *   link-local are taken.
 * - real servers (`ipvsadm -a`): 0.0.0.0, 224.0.0.5, 255.255.255.255, `::`, `ff02::5` and a
 *   non-local `fe80::5` are refused ("Invalid operation.  Possibly wrong module version, address
 *   not unicast, ..."; the kernel's ip_vs_new_dest wants a unicast or local IPv4 route, an IPv6
 *   unicast, non-link-local address); 127.0.0.1, 169.254.1.1 and `::1` are taken.
 * - virtual servers (`ipvsadm -A`): every address is taken, even 0.0.0.0 and `::`; but the
 *   hash:ip,port sets refuse an all-zero IP ("Kernel error received: Invalid argument"), and no
 *   packet is addressed to it, so an unspecified service address is left out entirely.
 */
import { cidrContains, parseIP, type IPAddress } from '@kube-proxy/core';

function isUnspecified(ip: IPAddress): boolean {
  return ip.bytes.every((b) => b === 0);
}

/** Why IPVS mode cannot serve `ip` as a cluster, external or load-balancer IP, or undefined. */
export function refusedServiceAddressReason(ip: string): string | undefined {
  const parsed = parseIP(ip);
  if (parsed === undefined) return 'not an IP address';
  return isUnspecified(parsed) ? 'the unspecified address' : undefined;
}

/** Why kube-ipvs0 cannot hold `ip` (canonical text), or undefined when it can. */
export function unbindableReason(ip: string): string | undefined {
  const parsed = parseIP(ip);
  if (parsed === undefined) return 'not an IP address';
  if (isUnspecified(parsed)) return 'the unspecified address';
  if (parsed.family === 'IPv6' && ip === '::1') return 'IPv6 loopback';
  if (parsed.family === 'IPv6' && cidrContains('ff00::/8', parsed)) return 'IPv6 multicast';
  return undefined;
}

/**
 * Why IPVS refuses `ip` as a real server, or undefined. The kernel takes an IPv6 link-local real
 * server only when it is the node's own address; pod endpoints never are, so all are left out.
 */
export function refusedRealServerReason(ip: string): string | undefined {
  const parsed = parseIP(ip);
  if (parsed === undefined) return 'not an IP address';
  if (isUnspecified(parsed)) return 'the unspecified address';
  if (parsed.family === 'IPv4') {
    if (cidrContains('224.0.0.0/4', parsed)) return 'IPv4 multicast';
    return ip === '255.255.255.255' ? 'the IPv4 broadcast address' : undefined;
  }
  if (cidrContains('ff00::/8', parsed)) return 'IPv6 multicast';
  return cidrContains('fe80::/10', parsed) ? 'IPv6 link-local' : undefined;
}
