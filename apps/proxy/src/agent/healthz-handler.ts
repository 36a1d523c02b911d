import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ProxyHealth, ProxyHealthChecker, ProxyMetrics } from '@kube-proxy/core';
import { goTimeJSON } from './go-time.js';
import { pathOf, sendJSON, sendNotFound } from './http-responses.js';
import type { SourceHealth } from './source-health.js';

/**
 * The healthz server's routes (upstream proxier_health.go):
 * - /healthz: 503 when a family is late programming a change, or the Node is not eligible (KEP-3836);
 * - /livez: the same without the Node, so the kubelet does not restart a proxy on a draining node.
 * With a `source` (the API source), /healthz also fails while it cannot reach the API server for too
 * long; the body then carries `sourceHealthy: false` and `sourceReason` (extra fields; /livez ignores it).
 * Bodies are upstream's v1.33+ JSON, a superset of the older `{"lastUpdated","currentTime","nodeEligible"}`.
 */
export function healthzHandler(checker: ProxyHealthChecker, metrics: ProxyMetrics | undefined, source?: SourceHealth): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req.url);
    if (path === '/healthz') {
      const health = checker.health();
      const eligible = checker.nodeEligible();
      const sourceHealthy = source?.isHealthy(health.currentTime);
      const code = health.healthy && eligible && sourceHealthy !== false ? 200 : 503;
      metrics?.healthzResponse(code);
      const extra = sourceHealthy === undefined ? undefined : { healthy: sourceHealthy, reason: sourceHealthy ? undefined : source?.reason?.(health.currentTime) };
      sendJSON(res, code, healthBody(health, code === 200, eligible, extra));
    } else if (path === '/livez') {
      const health = checker.health();
      const code = health.healthy ? 200 : 503;
      metrics?.livezResponse(code);
      sendJSON(res, code, healthBody(health, code === 200, undefined));
    } else {
      sendNotFound(res);
    }
  };
}

/**
 * Upstream's JSON for ProxyHealth. When healthy, lastUpdated is reported as "now": older releases
 * said when the sync loop last ran, and clients still read a recent value as "fine".
 */
export function healthBody(
  health: ProxyHealth,
  ok: boolean,
  nodeEligible: boolean | undefined,
  source?: { healthy: boolean; reason: string | undefined },
): string {
  const status: Record<string, { lastUpdated: string; healthy: boolean }> = {};
  const families = Object.entries(health.status).sort(([a], [b]) => a.localeCompare(b));
  for (const [family, s] of families) status[family] = { lastUpdated: goTimeJSON(s.lastUpdated), healthy: s.healthy };
  return JSON.stringify({
    lastUpdated: goTimeJSON(ok ? health.currentTime : health.lastUpdated),
    currentTime: goTimeJSON(health.currentTime),
    ...(nodeEligible === undefined ? {} : { nodeEligible }),
    healthy: health.healthy,
    ...(Object.keys(status).length > 0 ? { status } : {}),
    ...(source === undefined ? {} : { sourceHealthy: source.healthy }),
    ...(source?.reason === undefined ? {} : { sourceReason: source.reason }),
  });
}
