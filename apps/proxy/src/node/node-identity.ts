import { hostname } from 'node:os';
import { canonicalIP, ipFamilyOf, type IPFamily, type Logger } from '@kube-proxy/core';
import type { V1Node } from '@kubernetes/client-node';

/** The node name as upstream derives it: --hostname-override, else the hostname; trimmed, lower-cased. */
export function resolveNodeName(hostnameOverride: string, osHostname: () => string = hostname): string {
  const name = (hostnameOverride.trim() || osHostname()).trim().toLowerCase();
  if (name === '') throw new Error('hostnameOverride: the node name is empty (set --hostname-override)');
  return name;
}

function isUnspecified(ip: string): boolean {
  return ip === '' || ip === '0.0.0.0' || ip === '::';
}

/**
 * The node's IPs by family, as upstream's detectNodeIPs: a specific --bind-address is the primary IP;
 * otherwise the Node object's InternalIP addresses, then ExternalIP; otherwise loopback with a warning.
 * Returns the primary family first. Addresses are kept in canonical text, as upstream keeps a parsed
 * net.IP: an IPv4-mapped `::ffff:8.8.8.8` is the IPv4 address 8.8.8.8 (so `primary` node-port
 * addresses become `8.8.8.8/32`, not an IPv6-looking block that matches nothing).
 */
export function resolveNodeIPs(
  bindAddress: string,
  node: V1Node | undefined,
  logger: Logger,
): { primary: IPFamily; ips: Partial<Record<IPFamily, string>> } {
  const ips: Partial<Record<IPFamily, string>> = {};
  let primary: IPFamily | undefined;
  const take = (text: string) => {
    const ip = canonicalIP(text);
    const f = ip === undefined ? undefined : ipFamilyOf(ip);
    if (!ip || !f || ips[f]) return;
    ips[f] = ip;
    primary ??= f;
  };
  if (!isUnspecified(bindAddress)) take(bindAddress);
  const addresses = node?.status?.addresses ?? [];
  for (const type of ['InternalIP', 'ExternalIP']) {
    for (const a of addresses) if (a.type === type && typeof a.address === 'string') take(a.address);
  }
  if (!primary) {
    // Upstream's fallback: the proxy still works for cluster IPs; NodePort "primary" addresses do not.
    const fallbackFamily: IPFamily = bindAddress === '::' ? 'IPv6' : 'IPv4';
    logger.warn("Can't determine this node's IP, assuming loopback; if this is incorrect, set --bind-address", {
      node: node?.metadata?.name,
    });
    take(fallbackFamily === 'IPv6' ? '::1' : '127.0.0.1');
    primary = fallbackFamily;
  }
  return { primary: primary!, ips };
}
