/**
 * What the IPVS iptables skeleton needs besides the desired state (whose family and ipsets decide
 * the rest), and the guard that keeps configuration text canonical before it reaches a rule.
 *
 * Upstream has no other input here: --nodeport-addresses only shapes the state (node-port virtual
 * servers and the SCTP set entries; the rules match any local address, `-m addrtype --dst-type
 * LOCAL`), --cluster-cidr arrives as the local traffic detector, and IPVS mode writes no INVALID
 * drop (upstream's IPVS proxier never read nf_conntrack_tcp_be_liberal), so neither is an option.
 */
import type { IPFamily, LocalTrafficDetector } from '@kube-proxy/core';
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { assertStateCIDR } from '../state/state-guards.js';

export interface IpvsIptablesOptions {
  /** The proxier's family; must be the state's (a guard against handing one family's state to the other). */
  readonly family: IPFamily;
  /** --iptables-masquerade-bit (default 14): the mark KUBE-MARK-MASQ sets and KUBE-POSTROUTING tests. */
  readonly masqueradeBit: number;
  /** --masquerade-all: every packet to a cluster IP:port is marked, local or not. */
  readonly masqueradeAll: boolean;
  /** Core's detector for the family (selectLocalDetector): which sources are local pods. */
  readonly localDetector: LocalTrafficDetector;
  /** `MASQUERADE --random-fully` (upstream: iptables.HasRandomFully(), iptables ≥ 1.6.2). */
  readonly randomFully: boolean;
}

/** An interface name or prefix from the configuration: ≤ 15 printable bytes, no space, `"` or `\` (one argument). */
const INTERFACE_TEXT = /^[\x21\x23-\x5b\x5d-\x7e]{1,15}$/;

/** Throws UnsafeRestoreTextError unless the detector's text is canonical for `family`. */
export function assertRenderableDetector(detector: LocalTrafficDetector, family: IPFamily): void {
  switch (detector.kind) {
    case 'cidr':
      assertStateCIDR(detector.cidr, family);
      return;
    case 'bridge-interface':
      if (!INTERFACE_TEXT.test(detector.interfaceName)) refuse('bridge interface', detector.interfaceName);
      return;
    case 'interface-name-prefix':
      if (!INTERFACE_TEXT.test(detector.prefix)) refuse('interface name prefix', detector.prefix);
      return;
    case 'none':
      return;
    default: {
      const never: never = detector;
      refuse('local traffic detector', JSON.stringify(never));
    }
  }
}

function refuse(what: string, value: unknown): never {
  throw new UnsafeRestoreTextError(`refusing to render ${what} ${JSON.stringify(String(value).slice(0, 80))}: not one iptables argument`);
}
