import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from '@kube-proxy/core';

/** Why the Node is not usable yet, or undefined when it is. */
export function nodeNotReadyReason(node: V1Node | undefined, nodeName: string, needPodCIDR: boolean): string | undefined {
  if (!node) return `node "${nodeName}" not found`;
  const addresses = node.status?.addresses ?? [];
  // Upstream's GetNodeHostIPs: the Node's InternalIP, else ExternalIP, addresses.
  if (!addresses.some((a) => (a.type === 'InternalIP' || a.type === 'ExternalIP') && a.address)) {
    return `node "${nodeName}" has no InternalIP or ExternalIP address yet`;
  }
  const cidrs = node.spec?.podCIDRs?.length ? node.spec.podCIDRs : node.spec?.podCIDR ? [node.spec.podCIDR] : [];
  if (needPodCIDR && cidrs.length === 0) return `node "${nodeName}" does not have any PodCIDR allocated`;
  return undefined;
}

export interface NodeWaitOptions {
  readonly nodeName: string;
  /** detectLocalMode NodeCIDR: the proxier cannot tell local traffic without the Node's pod CIDRs. */
  readonly needPodCIDR: boolean;
  readonly timeoutMs: number;
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  /** Progress is logged this often while waiting. Default 15 s. */
  readonly logEveryMs?: number;
  readonly signal?: AbortSignal;
}

export interface NodeWaitResult {
  readonly node: V1Node | undefined;
  /** Undefined when the Node is ready; otherwise why it still is not, at the deadline. */
  readonly problem?: string;
}

/**
 * Polls the Node informer's cache until this Node exists with its addresses (and, when needed, its
 * pod CIDRs), as upstream's NodeManager does at startup, for at most `timeoutMs`.
 */
export async function waitForNode(current: () => V1Node | undefined, opts: NodeWaitOptions): Promise<NodeWaitResult> {
  const start = Date.now();
  const logEvery = opts.logEveryMs ?? 15_000;
  let lastLog = start;
  let announced = false;
  for (;;) {
    const node = current();
    const problem = nodeNotReadyReason(node, opts.nodeName, opts.needPodCIDR);
    if (problem === undefined) {
      if (announced) opts.logger.info('Node is ready', { node: opts.nodeName, waitedMs: Date.now() - start });
      return { node };
    }
    const now = Date.now();
    if (now - start >= opts.timeoutMs || opts.signal?.aborted) return { node, problem };
    if (!announced) {
      announced = true;
      opts.logger.info('Waiting for the Node object', { node: opts.nodeName, reason: problem, timeoutMs: opts.timeoutMs });
    } else if (now - lastLog >= logEvery) {
      lastLog = now;
      opts.logger.info('Still waiting for the Node object', { node: opts.nodeName, reason: problem, waitedMs: now - start });
    }
    await new Promise((r) => setTimeout(r, Math.min(opts.pollIntervalMs, Math.max(1, opts.timeoutMs - (now - start)))));
  }
}
