import type { V1Node } from '@kubernetes/client-node';
import type { KubeProxyConfiguration } from '../../config/types.js';
import type { IPFamily } from '../model/protocol.js';
import type { Logger } from '../../host/logger.js';
import type { LocalTrafficDetector } from './local-traffic-detector.js';
import { sameLocalDetector, selectLocalDetector } from './select-local-detector.js';

function podCIDRsOf(node: V1Node): string[] {
  const cidrs = node.spec?.podCIDRs ?? [];
  if (cidrs.length > 0) return [...cidrs];
  return node.spec?.podCIDR ? [node.spec.podCIDR] : [];
}

/**
 * NodeCIDR local detection follows this Node's podCIDRs: the new detector when an event about the
 * node `nodeName` changes it, else undefined (another mode, another Node, or the same CIDRs). Every
 * backend whose rules test "is the source a local pod" reacts to Node events through this.
 */
export function localDetectorAfterNodeEvent(
  config: Pick<KubeProxyConfiguration, 'detectLocalMode' | 'clusterCIDR' | 'detectLocal'>,
  family: IPFamily,
  nodeName: string,
  current: LocalTrafficDetector,
  event: { readonly node: V1Node; readonly deleted: boolean },
  logger: Logger,
): LocalTrafficDetector | undefined {
  if (config.detectLocalMode !== 'NodeCIDR') return undefined;
  if (event.node?.metadata?.name !== nodeName) return undefined;
  const detector = selectLocalDetector(config, family, event.deleted ? undefined : podCIDRsOf(event.node), logger);
  if (sameLocalDetector(detector, current)) return undefined;
  logger.info('Local traffic detector changed with the Node podCIDRs', { detector });
  return detector;
}
