/**
 * What an operator would read from a running proxy: its Prometheus /metrics text and its /healthz
 * verdict, fetched from inside the node namespace (both servers listen there). The fault and soak
 * suites assert on these, so the parsing is strict: a missing sample is `undefined`, never 0.
 */
import type { SimulatedNode } from '@kube-proxy/testing-netns';
import { httpGet } from './http-get.js';

/** Upstream's metric names, as the proxy exports them. */
export const METRIC = {
  restoreFailures: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
  partialRestoreFailures: 'kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total',
  syncCount: 'kubeproxy_sync_proxy_rules_duration_seconds_count',
  lastSync: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
  lastQueued: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
  endpointChangesPending: 'kubeproxy_sync_proxy_rules_endpoint_changes_pending',
  serviceChangesPending: 'kubeproxy_sync_proxy_rules_service_changes_pending',
} as const;

/** A sample's labels must include these (e.g. `{ ip_family: 'IPv4' }`). */
export type LabelMatch = Readonly<Record<string, string>>;

/**
 * The value of `name`'s first sample whose labels include `labels`, from Prometheus text format.
 * `undefined` when there is no such sample.
 */
export function metricValue(text: string, name: string, labels: LabelMatch = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    let labelText = '';
    let valueText: string;
    if (rest.startsWith('{')) {
      const end = rest.indexOf('}');
      if (end < 0) continue;
      labelText = rest.slice(1, end);
      valueText = rest.slice(end + 1);
    } else if (rest.startsWith(' ')) {
      valueText = rest;
    } else {
      continue; // a longer metric name with this prefix
    }
    const have = parseLabels(labelText);
    if (!Object.entries(labels).every(([k, v]) => have[k] === v)) continue;
    const v = Number(valueText.trim().split(/\s+/)[0]);
    if (Number.isFinite(v)) return v;
  }
  return undefined;
}

function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) out[m[1]!] = m[2]!;
  return out;
}

/**
 * A counter's value: prom-client exports no sample for a labelled counter that was never
 * incremented, so a declared (`# TYPE`) counter without a matching sample reads 0.
 */
export function counterValue(text: string, name: string, labels: LabelMatch = {}): number | undefined {
  const v = metricValue(text, name, labels);
  if (v !== undefined) return v;
  return new RegExp(`^# TYPE ${name} counter$`, 'm').test(text) ? 0 : undefined;
}

/** A bounded scrape of `http://<addr>/metrics` from `ns`; throws when it does not answer 200. */
export async function scrapeMetrics(node: SimulatedNode, ns: string, addr: string, timeoutMs = 2000): Promise<string> {
  const r = await httpGet(node, ns, `http://${addr}/metrics`, timeoutMs);
  if (r.status !== 200) throw new Error(`GET http://${addr}/metrics: ${r.status} ${r.error ?? r.body.slice(0, 200)}`);
  return r.body;
}

/** One /healthz answer, timed by the proxy's own clock (`currentTime` of the body). */
export interface HealthzSample {
  readonly status: number;
  /** The proxy's clock when it judged (ms since the epoch); NaN when the body had none. */
  readonly currentTime: number;
  /** This test process's clock when the answer arrived. */
  readonly receivedAt: number;
  readonly body: string;
}

/** A bounded `GET http://<addr>/healthz` from `ns`; a failed request comes back with status 0. */
export async function readHealthz(node: SimulatedNode, ns: string, addr: string, timeoutMs = 2000): Promise<HealthzSample> {
  const r = await httpGet(node, ns, `http://${addr}/healthz`, timeoutMs);
  let currentTime = Number.NaN;
  try {
    const b = JSON.parse(r.body) as { currentTime?: string };
    if (typeof b.currentTime === 'string') currentTime = Date.parse(b.currentTime);
  } catch {
    /* not JSON: keep NaN */
  }
  return { status: r.status, currentTime, receivedAt: Date.now(), body: r.body };
}
