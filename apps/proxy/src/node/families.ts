import type { HostCapabilities, IPFamily } from '@kube-proxy/core';

/**
 * Which families to proxy, primary first. As upstream: dual-stack when the host can program both
 * (iptables and ip6tables present). In --dry-run the host is not consulted; the node's addresses and
 * the cluster CIDRs decide instead, so the output is the same on a laptop and on the node.
 */
export function proxiedFamilies(opts: {
  primary: IPFamily;
  nodeIPs: Partial<Record<IPFamily, string>>;
  clusterCIDR: string;
  dryRun: boolean;
  host: HostCapabilities;
}): IPFamily[] {
  const secondary: IPFamily = opts.primary === 'IPv4' ? 'IPv6' : 'IPv4';
  let dual: boolean;
  if (opts.dryRun) {
    const cidrs = opts.clusterCIDR.split(',').map((s) => s.trim()).filter(Boolean);
    const cidrHasSecondary = cidrs.some((c) => (secondary === 'IPv6') === c.includes(':'));
    dual = opts.nodeIPs[secondary] !== undefined || cidrHasSecondary;
  } else {
    dual = opts.host.tools.iptables.present && opts.host.tools.ip6tables.present;
  }
  return dual ? [opts.primary, secondary] : [opts.primary];
}
