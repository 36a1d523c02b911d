import type { KubeProxyConfiguration } from '../../config/types.js';
import { parseCIDR } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import type { Logger } from '../../host/logger.js';
import { NO_LOCAL_DETECTOR, type LocalTrafficDetector } from './local-traffic-detector.js';

/**
 * The first CIDR of `family`, as core's canonical text (e.g. `10.244.0.0/16`): podCIDRs come from the
 * Node object, and only text core parsed and re-formatted reaches a rule (for a valid CIDR without
 * host bits this is the text as given).
 */
function cidrOfFamily(cidrs: readonly string[], family: IPFamily): string | undefined {
  for (const raw of cidrs) {
    const cidr = typeof raw === 'string' ? parseCIDR(raw.trim()) : undefined;
    if (cidr?.family === family) return cidr.text;
  }
  return undefined;
}

/**
 * Picks the local-traffic detector of one family from the configuration, as upstream's
 * getLocalDetectors (cmd/kube-proxy/app/server_linux.go):
 * - ClusterCIDR (also for ""): `clusterCIDR` of this family, else none;
 * - NodeCIDR: the Node's `spec.podCIDRs` of this family, else none (until the Node is known);
 * - BridgeInterface / InterfaceNamePrefix: `detectLocal.*`, none when empty.
 */
export function selectLocalDetector(
  config: Pick<KubeProxyConfiguration, 'detectLocalMode' | 'clusterCIDR' | 'detectLocal'>,
  family: IPFamily,
  nodePodCIDRs: readonly string[] | undefined,
  logger: Logger,
): LocalTrafficDetector {
  const mode = config.detectLocalMode === '' ? 'ClusterCIDR' : config.detectLocalMode;
  switch (mode) {
    case 'ClusterCIDR': {
      const cidr = cidrOfFamily(config.clusterCIDR.split(',').filter((s) => s.trim() !== ''), family);
      if (cidr) return { kind: 'cidr', cidr };
      logger.info('Detect-local-mode set to ClusterCIDR, but no cluster CIDR defined for this IP family', {
        family,
      });
      return NO_LOCAL_DETECTOR;
    }
    case 'NodeCIDR': {
      const cidr = cidrOfFamily(nodePodCIDRs ?? [], family);
      if (cidr) return { kind: 'cidr', cidr };
      logger.info('Detect-local-mode set to NodeCIDR, but no PodCIDR of this IP family is known for the node', {
        family,
      });
      return NO_LOCAL_DETECTOR;
    }
    case 'BridgeInterface': {
      const name = config.detectLocal.bridgeInterface.trim();
      if (name !== '') return { kind: 'bridge-interface', interfaceName: name };
      logger.error('Detect-local-mode set to BridgeInterface, but detectLocal.bridgeInterface is empty');
      return NO_LOCAL_DETECTOR;
    }
    case 'InterfaceNamePrefix': {
      const prefix = config.detectLocal.interfaceNamePrefix.trim();
      if (prefix !== '') return { kind: 'interface-name-prefix', prefix };
      logger.error('Detect-local-mode set to InterfaceNamePrefix, but detectLocal.interfaceNamePrefix is empty');
      return NO_LOCAL_DETECTOR;
    }
    default:
      logger.error('Unknown detect-local-mode; not detecting local traffic', { mode });
      return NO_LOCAL_DETECTOR;
  }
}

/** Whether two detectors select the same traffic. */
export function sameLocalDetector(a: LocalTrafficDetector, b: LocalTrafficDetector): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
