/**
 * One endpoint of a Service changed through the API server while the proxy runs (issue 24: "an
 * incremental sync (one-endpoint change) ≤ 1 s"): from the update's acknowledgement to the proxy's
 * "SyncProxyRules complete" line of the sync that applied it (printed once nft returned, so the rule
 * is in the kernel by then; the kernel is checked afterwards, untimed: one `nft list chain` of a
 * 10,000-chain table takes seconds on a loaded machine, and polling it measured the poll), and the
 * proxy's own account of that sync (the line's elapsedMs: compute plus nft, without the watch delay).
 */
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';
import type { NetnsApiHost } from './netns-api-host.js';
import type { KernelProbe } from './running-proxy-probes.js';

const CHANGE_TIMEOUT_MS = 120_000;
/** One `nft list chain` of a big table can take a minute on a loaded machine. */
const CHECK_TIMEOUT_MS = 600_000;

export interface EndpointChangeFigure {
  /** Update acknowledged by the API server → the new endpoint served by the kernel's rules. */
  readonly wallMs: number;
  /** The proxy's sync that applied it (its log's elapsedMs). */
  readonly syncElapsedMs: number;
}

/** The proxy's IPv4 "SyncProxyRules complete" lines as they arrive. */
export interface SyncLog {
  readonly lines: ReadonlyArray<{ readonly at: number; readonly elapsedMs: number }>;
}

export async function measureEndpointChange(opts: { node: SimulatedNode; api: NetnsApiHost; probe: KernelProbe; syncLog: SyncLog; slice: V1EndpointSlice }): Promise<EndpointChangeFigure> {
  const { node, api, probe, syncLog, slice } = opts;
  const ep = slice.endpoints[0]!;
  const endpoint = `${ep.addresses[0]!}:${slice.ports![0]!.port!}`;
  const service = { namespace: slice.metadata!.namespace!, name: slice.metadata!.labels!['kubernetes.io/service-name']! };
  const linesBefore = syncLog.lines.length;
  await api.update([slice]);
  const sent = Date.now();
  // The first sync to complete after the update applied it (nothing else changes meanwhile); the
  // kernel is checked after the timing, as long as it takes.
  await waitFor('a sync after the change', async () => (syncLog.lines.length > linesBefore ? true : undefined), { timeoutMs: CHANGE_TIMEOUT_MS, intervalMs: 5 });
  const line = syncLog.lines[linesBefore]!;
  await waitFor(`${endpoint} in the kernel's rules`, async () => ((await probe.endpointServed(node, service, endpoint)) ? true : undefined), { timeoutMs: CHECK_TIMEOUT_MS, intervalMs: 1000 });
  return { wallMs: line.at - sent, syncElapsedMs: line.elapsedMs };
}
