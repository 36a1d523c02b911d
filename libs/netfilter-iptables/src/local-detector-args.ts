import type { LocalTrafficDetector } from '@kube-proxy/core';

/**
 * A LocalTrafficDetector rendered as iptables match arguments (upstream pkg/proxy/util/localdetector.go).
 * `ifLocal` / `ifNotLocal` are the argument lists; `ifLocalText` / `ifNotLocalText` the same,
 * pre-joined with spaces, for the renderer's hot path. Here in core because both iptables-based
 * proxiers (iptables and IPVS mode) write the same local-traffic matches.
 */
export interface LocalDetectorArgs {
  /** upstream's IsImplemented(): false for the no-op detector, whose rules upstream skips. */
  readonly implemented: boolean;
  readonly ifLocal: readonly string[];
  readonly ifNotLocal: readonly string[];
  readonly ifLocalText: string;
  readonly ifNotLocalText: string;
}

function make(ifLocal: string[], ifNotLocal: string[]): LocalDetectorArgs {
  return {
    implemented: ifLocal.length > 0,
    ifLocal,
    ifNotLocal,
    ifLocalText: ifLocal.join(' '),
    ifNotLocalText: ifNotLocal.join(' '),
  };
}

const NOOP: LocalDetectorArgs = make([], []);

/**
 * - cidr: `-s CIDR` / `! -s CIDR` (NewDetectLocalByCIDR)
 * - bridge-interface: `-i IFACE` / `! -i IFACE` (NewDetectLocalByBridgeInterface)
 * - interface-name-prefix: `-i PREFIX+` / `! -i PREFIX+` (NewDetectLocalByInterfaceNamePrefix)
 * - none: not implemented (NewNoOpLocalDetector)
 */
export function localDetectorArgs(detector: LocalTrafficDetector): LocalDetectorArgs {
  switch (detector.kind) {
    case 'cidr':
      return make(['-s', detector.cidr], ['!', '-s', detector.cidr]);
    case 'bridge-interface':
      return make(['-i', detector.interfaceName], ['!', '-i', detector.interfaceName]);
    case 'interface-name-prefix':
      return make(['-i', detector.prefix + '+'], ['!', '-i', detector.prefix + '+']);
    case 'none':
      return NOOP;
    default: {
      const never: never = detector;
      throw new Error(`unknown local traffic detector ${JSON.stringify(never)}`);
    }
  }
}
