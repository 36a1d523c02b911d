/**
 * How a backend tells "traffic from a local pod" apart from everything else (upstream's
 * LocalTrafficDetector). Core decides *which* test applies from the configuration; each backend
 * renders it in its own rule language (iptables: `-s CIDR`, `-i IFACE`, `-i PREFIX+`).
 */
export type LocalTrafficDetector =
  | { readonly kind: 'none' }
  | { readonly kind: 'cidr'; readonly cidr: string }
  | { readonly kind: 'bridge-interface'; readonly interfaceName: string }
  | { readonly kind: 'interface-name-prefix'; readonly prefix: string };

export const NO_LOCAL_DETECTOR: LocalTrafficDetector = { kind: 'none' };
