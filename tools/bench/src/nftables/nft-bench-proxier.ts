import type { V1Node } from '@kubernetes/client-node';
import { nullLogger, type Clock, type CommandExecutor, type ProxyContext } from '@kube-proxy/core';
import { testContext } from '@kube-proxy/core/testing';
import { NftablesProxier, type NftInterface } from '@kube-proxy/backend-nftables/internal';
import type { ScaleCluster } from '../common/scale-cluster.js';

/** The node the synthetic cluster (scale-cluster.ts) is proxied for, as in bench-render-options.ts. */
export const BENCH_NODE = { name: 'node-0', ip: '192.168.0.10', clusterCIDR: '10.128.0.0/9', serviceCIDR: '10.96.0.0/12' } as const;

/**
 * Real time, but no timers: the bench drives every sync itself, so the proxier's periodic table
 * check and retries never run an `nft` in the middle of a measurement.
 */
const driveOnlyClock: Clock = { now: () => Date.now(), setTimeout: () => null, clearTimeout: () => undefined };

export function benchContext(): ProxyContext {
  return testContext({
    nodeName: BENCH_NODE.name,
    nodeIPs: { IPv4: BENCH_NODE.ip },
    families: ['IPv4'],
    dryRun: false,
    config: { clusterCIDR: BENCH_NODE.clusterCIDR },
  });
}

/** This node's Node object; `zone` is the one topology label, changed to force a full sync. */
export function benchNode(zone: string): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: BENCH_NODE.name, labels: { 'kubernetes.io/hostname': BENCH_NODE.name, 'topology.kubernetes.io/zone': zone } },
    status: { addresses: [{ type: 'InternalIP', address: BENCH_NODE.ip }] },
  };
}

/** An IPv4 NftablesProxier over `nft`, fed the cluster and its Node, initialized, not yet synced. */
export function loadedNftProxier(nft: NftInterface, executor: CommandExecutor, cluster: ScaleCluster, zone = 'zone-a'): NftablesProxier {
  const proxier = new NftablesProxier({
    family: 'IPv4',
    context: benchContext(),
    nft,
    executor,
    clock: driveOnlyClock,
    logger: nullLogger,
    networkInterfaces: () => ({}),
  });
  proxier.onServiceCIDRsChanged([BENCH_NODE.serviceCIDR]);
  proxier.onNodeAdd(benchNode(zone));
  for (const s of cluster.services) proxier.onServiceAdd(s);
  for (const s of cluster.slices) proxier.onEndpointSliceAdd(s);
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  return proxier;
}
