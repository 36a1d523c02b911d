/**
 * A cold start at a chosen COLD_START_BATCH (and COLD_START_MAX_SERVICES). The proxier always uses the exported default, so this
 * plans the same cold start outside it: core's plans and the backend's renderer over the bench
 * cluster, then coldStartBatches(…, { batch, elementsLast }) and TableSync as NftablesProxier.transactions() does on a cold start.
 * The bench checks that at the default batch the texts equal the proxier's, so the sweep measures
 * the proxier's transactions and not a look-alike.
 */
import {
  NODE_PORT_ADDRESSES_PRIMARY,
  nullLogger,
  parseNodePortAddresses,
  planServicePort,
  resolveNodePortAddresses,
  selectLocalDetector,
  topologyGates,
} from '@kube-proxy/core';
import { NameCache, TableSync, coldStartBatches, masqueradeMarkOf, nftLocalMatch, renderServicePort, tableSkeleton, type NftInterface, type ServicePortRender } from '@kube-proxy/backend-nftables/internal';
import { loadedState } from '../common/bench-state.js';
import { BENCH_NODE, benchContext } from './nft-bench-proxier.js';
import type { ScaleCluster } from '../common/scale-cluster.js';

export interface ColdStartRun {
  readonly batch: number;
  readonly transactions: number;
  readonly operations: number;
  /** Render + plan (JavaScript only). */
  readonly jsMs: number;
  /** Sum of the nft runs. */
  readonly kernelMs: number;
  readonly totalMs: number;
}

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

export async function coldStartAtBatch(cluster: ScaleCluster, nft: NftInterface, batch: number, maxServices?: number): Promise<ColdStartRun> {
  const context = benchContext();
  const config = context.config;
  const state = loadedState(cluster);
  const started = process.hrtime.bigint();

  const detector = selectLocalDetector(config, 'IPv4', undefined, nullLogger);
  const names = new NameCache();
  const planCtx = {
    nodeName: BENCH_NODE.name,
    nodeLabels: state.nodeLabels,
    topologyGates: topologyGates(config.featureGates),
    masqueradeAll: config.nftables.masqueradeAll,
    localDetection: detector.kind !== 'none',
    nodeIP: BENCH_NODE.ip,
  };
  const renderCtx = { family: 'ip' as const, masqueradeMark: masqueradeMarkOf(config.nftables.masqueradeBit), masqueradeAll: config.nftables.masqueradeAll, local: nftLocalMatch(detector, 'IPv4'), nodeIP: BENCH_NODE.ip, names };
  names.beginGeneration();
  const changes: Array<{ key: string; render: ServicePortRender | undefined }> = [];
  for (const [key, svc] of state.serviceMap) changes.push({ key, render: renderServicePort(planServicePort(svc, state.endpointsMap.get(key) ?? [], planCtx), renderCtx) });
  names.endGeneration();

  const npa = parseNodePortAddresses([NODE_PORT_ADDRESSES_PRIMARY], 'IPv4', BENCH_NODE.ip, nullLogger);
  const selection = resolveNodePortAddresses(npa, () => ({}));
  const skeleton = tableSkeleton({
    family: 'ip',
    masqueradeMark: masqueradeMarkOf(config.nftables.masqueradeBit),
    serviceCIDRs: [BENCH_NODE.serviceCIDR],
    nodePortsOnAllAddresses: selection.all,
    nodePortIPs: selection.all ? [] : [...selection.ips],
    masqueradeAll: config.nftables.masqueradeAll,
    notLocal: renderCtx.local?.notLocal ?? null,
  });

  const table = new TableSync('ip');
  let kernel = 0;
  let operations = 0;
  let transactions = 0;
  for (const step of coldStartBatches(table, skeleton, changes, Date.now(), { batch, ...(maxServices === undefined ? {} : { maxServices }), elementsLast: true })) {
    const tx = step.tx;
    const t = process.hrtime.bigint();
    await nft.run(tx);
    kernel += since(t);
    step.commit();
    operations += tx.size;
    transactions++;
  }
  const totalMs = since(started);
  return { batch, transactions, operations, jsMs: totalMs - kernel, kernelMs: kernel, totalMs };
}
