/**
 * One size of the iptables sync benchmark, in-process: N Services × E endpoints fed through core's
 * change trackers, the full payload rendered (median of 3 after a warm-up), one endpoint moved and
 * the partial sync computed (trackers + render: our own compute, apart from the kernel tool), then
 * the full and partial payloads applied by the real iptables-restore in fresh network namespaces.
 * Used by iptables-sync.bench.ts and iptables-scale.bench.ts.
 */
import type { AppliedChanges } from '@kube-proxy/core';
import { AppliedChainMemo, ChainNameCache, renderRuleset } from '@kube-proxy/backend-iptables/internal';
import { RestoreNamespace, type Variant } from '../common/netns-restore.js';
import { scaleCluster, sliceOf } from '../common/scale-cluster.js';
import { BENCH_RENDER_OPTIONS } from '../common/bench-render-options.js';
import { loadedState } from '../common/bench-state.js';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const OPTIONS = BENCH_RENDER_OPTIONS;
/** One-endpoint changes timed after the first (the one applied to the kernel); the median is reported. */
const CHANGE_SAMPLES = 5;

function changedServices(applied: AppliedChanges): Set<string> {
  return new Set([...applied.services.updatedServices, ...applied.endpoints.updatedServices]);
}

export interface SyncRow {
  n: number;
  computeMs: number;
  renderMs: number;
  fullBytes: number;
  fullLines: number;
  partialRenderMs: number;
  partialBytes: number;
  /** Median of CHANGE_SAMPLES further one-endpoint changes: trackers + partial render (ms, wall). */
  changeComputeMs: number;
  /** The same changes' median CPU time (ms, this process: user + system); less sensitive to a busy machine. */
  changeCpuMs: number;
  apply: Partial<Record<Variant, { full: number | null; partial: number | null }>>;
}

/**
 * CHANGE_SAMPLES one-endpoint changes, each of another service (as on a busy node), each committed
 * as a successful restore would: the median of trackers + partial render, in ms.
 */
function timeChanges(c: {
  n: number;
  endpointsPerService: number;
  cluster: ReturnType<typeof scaleCluster>;
  state: ReturnType<typeof loadedState>;
  names: ChainNameCache;
  memo: AppliedChainMemo;
  activeChains: ReadonlySet<string>;
}): { wallMs: number; cpuMs: number } {
  let activeChains = c.activeChains;
  const times: number[] = [];
  const cpu: number[] = [];
  for (let k = 1; k <= CHANGE_SAMPLES; k++) {
    const i = (k * 7919) % c.n;
    c.state.onEndpointSliceUpdate(c.cluster.slices[i]!, sliceOf(i, c.endpointsPerService, 1));
    const t = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const a = c.state.applyPendingChanges();
    const r = renderRuleset(
      { serviceMap: c.state.serviceMap, endpointsMap: c.state.endpointsMap, changedServices: changedServices(a), existingNatChains: activeChains, appliedChains: c.memo },
      OPTIONS,
      c.names,
    );
    times.push(ms(t));
    const used = process.cpuUsage(c0);
    cpu.push((used.user + used.system) / 1000);
    c.memo.commit(r.appliedChainUpdate!);
    activeChains = new Set(r.activeNatChains);
  }
  return { wallMs: median(times), cpuMs: median(cpu) };
}

export async function measureSync(n: number, endpointsPerService: number, variants: readonly Variant[], nftMax: number): Promise<SyncRow> {
  const cluster = scaleCluster(n, endpointsPerService);

  let t = process.hrtime.bigint();
  const state = loadedState(cluster);
  const computeMs = ms(t);

  const names = new ChainNameCache();
  // What the last successful restore wrote: lets a partial sync leave unchanged top-level chains out.
  const memo = new AppliedChainMemo();
  const full = () =>
    renderRuleset(
      { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: null, existingNatChains: null, appliedChains: memo },
      OPTIONS,
      names,
    );
  memo.commit(full().appliedChainUpdate!); // warm-up: JIT and the chain-name cache, as in a running proxier after its first sync
  const times: number[] = [];
  let fullPayload = Buffer.alloc(0);
  let activeChains: ReadonlySet<string> = new Set();
  for (let i = 0; i < 3; i++) {
    t = process.hrtime.bigint();
    const r = full();
    const payload = r.payloadBytes; // the bytes handed to iptables-restore
    times.push(ms(t));
    fullPayload = Buffer.from(payload); // copy: the renderer reuses its memory on the next call
    activeChains = new Set(r.activeNatChains);
    memo.commit(r.appliedChainUpdate!);
  }

  // One endpoint of one service moves: the partial sync a running node does most often.
  state.onEndpointSliceUpdate(cluster.slices[0]!, sliceOf(0, endpointsPerService, 1));
  t = process.hrtime.bigint();
  const applied = state.applyPendingChanges();
  const partial = renderRuleset(
    { serviceMap: state.serviceMap, endpointsMap: state.endpointsMap, changedServices: changedServices(applied), existingNatChains: activeChains, appliedChains: memo },
    OPTIONS,
    names,
  );
  const partialPayload = Buffer.from(partial.payloadBytes);
  const partialRenderMs = ms(t);
  if (partial.staleChainsDeleted !== 1) throw new Error(`expected the moved endpoint's chain to be deleted, got ${partial.staleChainsDeleted}`);
  memo.commit(partial.appliedChainUpdate!);
  activeChains = new Set(partial.activeNatChains);
  const change = timeChanges({ n, endpointsPerService, cluster, state, names, memo, activeChains });

  const row: SyncRow = {
    n,
    computeMs,
    renderMs: median(times),
    fullBytes: fullPayload.length,
    fullLines: fullPayload.toString('latin1').split('\n').length - 1,
    partialRenderMs,
    partialBytes: partialPayload.length,
    changeComputeMs: change.wallMs,
    changeCpuMs: change.cpuMs,
    apply: {},
  };

  for (const variant of variants) {
    if (variant === 'nft' && n > nftMax) continue;
    const ns = await RestoreNamespace.create(`kp-bench-${process.pid}-${variant}`, variant);
    try {
      const fullMs = await ns.restore(fullPayload, { wholeTables: true });
      // A full load the kernel tool could not finish leaves nothing to apply a partial sync on.
      const partialMs = fullMs === null ? null : await ns.restore(partialPayload);
      if (fullMs !== null) {
        const nat = await ns.save('nat');
        // The kernel must hold what we rendered: every service's chain and the moved endpoint.
        if (!nat.includes('-A KUBE-SERVICES') || !nat.includes('10.128.')) throw new Error(`${variant}: nat table does not hold the payload`);
      }
      row.apply[variant] = { full: fullMs, partial: partialMs };
    } finally {
      await ns.destroy();
    }
    process.stderr.write(`  ${n} services: ${variant} applied\n`);
  }
  return row;
}

