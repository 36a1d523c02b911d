import type { LocalTrafficDetector, IPFamily } from '@kube-proxy/core';

/**
 * The local-traffic detector as nftables matches (upstream's IfLocalNFT / IfNotLocalNFT): by pod
 * CIDR (`ip saddr 10.0.0.0/8`), by bridge (`iifname cbr0`) or by interface name prefix
 * (`iifname veth*`). Null when no detector is configured.
 */
export interface NftLocalMatch {
  readonly local: string;
  readonly notLocal: string;
}

export function nftLocalMatch(detector: LocalTrafficDetector, family: IPFamily): NftLocalMatch | null {
  switch (detector.kind) {
    case 'cidr': {
      const ipX = detector.cidr.includes(':') ? 'ip6' : family === 'IPv6' ? 'ip6' : 'ip';
      return { local: `${ipX} saddr ${detector.cidr}`, notLocal: `${ipX} saddr != ${detector.cidr}` };
    }
    case 'bridge-interface':
      return { local: `iifname ${detector.interfaceName}`, notLocal: `iifname != ${detector.interfaceName}` };
    case 'interface-name-prefix':
      return { local: `iifname ${detector.prefix}*`, notLocal: `iifname != ${detector.prefix}*` };
    default:
      return null;
  }
}
