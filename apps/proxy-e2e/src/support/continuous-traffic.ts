/**
 * Continuous real TCP traffic while a test disrupts the proxy (restart, kill -9): each stream runs
 * back-to-back probe batches (by default 50 requests, one every 20 ms, each bounded by 1 s) until
 * stop() is called, bounded in batches and time. Every request is a new connection, so each one
 * goes through the rules as they are at that moment: one failure means a gap in the datapath.
 */
import { describeProbe, probe, type ProbeResult, type SimulatedNode } from '@kube-proxy/testing-netns';

export interface TrafficTarget {
  /** For messages, e.g. "pod3 → ClusterIP". */
  readonly what: string;
  readonly ns: string;
  readonly host: string;
  readonly port: number;
}

export interface StreamResult {
  readonly what: string;
  readonly runs: readonly ProbeResult[];
  readonly requests: number;
  readonly failed: number;
}

export interface TrafficOptions {
  readonly batch?: number;
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  /** Upper bounds, whatever happens: batches per stream and total time. */
  readonly maxBatches?: number;
  readonly maxMs?: number;
}

export interface ContinuousTraffic {
  readonly startedAt: number;
  /** Stops after the batches in flight and returns every stream's results. */
  stop(): Promise<StreamResult[]>;
}

export function startContinuousTraffic(node: SimulatedNode, targets: readonly TrafficTarget[], o: TrafficOptions = {}): ContinuousTraffic {
  const { batch = 50, intervalMs = 20, timeoutMs = 1000, maxBatches = 60, maxMs = 90_000 } = o;
  const startedAt = Date.now();
  let stopped = false;
  const stream = async (t: TrafficTarget): Promise<StreamResult> => {
    const runs: ProbeResult[] = [];
    let requests = 0;
    let failed = 0;
    while (!stopped && runs.length < maxBatches && Date.now() - startedAt < maxMs) {
      const r = await probe(node, t.ns, { host: t.host, port: t.port, count: batch, intervalMs, timeoutMs, maxTotalMs: 30_000 });
      runs.push(r);
      requests += r.count;
      failed += r.count - r.ok;
    }
    return { what: t.what, runs, requests, failed };
  };
  const all = Promise.all(targets.map(stream));
  return {
    startedAt,
    stop: async () => {
      stopped = true;
      return all;
    },
  };
}

/** One line per failed batch (empty when every request succeeded). */
export function failedBatches(results: readonly StreamResult[]): string[] {
  return results.flatMap((s) => s.runs.filter((r) => r.ok !== r.count).map((r) => `${s.what}: ${describeProbe(r)}`));
}
