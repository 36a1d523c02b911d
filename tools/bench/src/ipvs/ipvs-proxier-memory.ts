/**
 * Memory of the IPVS proxier's state at N services × E endpoints, in a process of its own (the IPVS
 * bench spawns it with --expose-gc; it prints one JSON line): the API objects held as the informers
 * hold them, core's trackers (ProxyState) fed with them, the IpvsStateIndex and the AppliedIpvs view
 * a first sync leaves, after a full GC. Not held: the materialized full state and the batches of that
 * first sync (garbage once it is applied). The kernel's side is in the kernel, not in this process,
 * so this is the host-side footprint of a running `--proxy-mode=ipvs` proxier's data, without the
 * process's other parts (API client, metrics server): the RSS figure includes node's own baseline.
 */
import { nullLogger, ProxyState } from '@kube-proxy/core';
import { AppliedIpvs, IpvsStateIndex, kernelTarget } from '@kube-proxy/backend-ipvs/internal';
import { STATE_OPTIONS } from './ipvs-workload.js';
import { scaleCluster } from '../common/scale-cluster.js';

const MiB = 1024 * 1024;

function arg(name: string): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  const n = Number(hit?.slice(name.length + 3));
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`--${name}: an integer 1..100000`);
  return n;
}

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const services = arg('services');
  const endpoints = arg('endpoints');
  gc();
  const baseRss = process.memoryUsage().rss;
  const cluster = scaleCluster(services, endpoints);
  const state = new ProxyState({ family: 'IPv4', nodeName: STATE_OPTIONS.nodeName, logger: nullLogger, onChange: () => undefined });
  for (const s of cluster.services) state.onServiceAdd(s);
  for (const s of cluster.slices) state.onEndpointSliceAdd(s);
  state.onServicesSynced();
  state.onEndpointSlicesSynced();
  state.applyPendingChanges();
  gc();
  const trackersHeap = process.memoryUsage().heapUsed;
  const index = IpvsStateIndex.build(state.serviceMap, state.endpointsMap, STATE_OPTIONS);
  const applied = new AppliedIpvs('IPv4');
  applied.replaceAll(await kernelTarget({ desired: index.materialize().virtualServers, current: [], excludeCIDRs: [], connections: async () => new Map() }));
  gc();
  gc();
  const m = process.memoryUsage();
  process.stdout.write(
    JSON.stringify({
      services,
      endpoints,
      virtualServers: applied.virtualServers,
      baseRssMiB: baseRss / MiB,
      rssMiB: m.rss / MiB,
      peakRssMiB: (process.resourceUsage().maxRSS * 1024) / MiB,
      heapUsedMiB: m.heapUsed / MiB,
      ipvsStateHeapMiB: (m.heapUsed - trackersHeap) / MiB,
      keep: cluster.services.length + state.serviceMap.size + index.family.length,
    }) + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
