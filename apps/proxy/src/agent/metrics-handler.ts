import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { KubeProxyConfiguration, Logger, PromProxyMetrics } from '@kube-proxy/core';
import { pathOf, sendJSON, sendNotFound, sendText } from './http-responses.js';

/** configz's key for kube-proxy's component config (the API group). */
export const CONFIGZ_GROUP = 'kubeproxy.config.k8s.io';

/**
 * The metrics server's routes, as upstream serveMetrics: /metrics, /proxyMode (the mode name as
 * text), /configz (the effective configuration under its group name), and the generic /healthz "ok".
 * Profiling (/debug/pprof) and /metrics/slis are not provided.
 */
export function metricsHandler(opts: {
  readonly metrics: PromProxyMetrics;
  readonly mode: string;
  readonly config: KubeProxyConfiguration;
  readonly logger: Logger;
}): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    switch (pathOf(req.url)) {
      case '/metrics':
        opts.metrics.scrape().then(
          ({ contentType, body }) => sendText(res, 200, body, contentType),
          (err: unknown) => {
            opts.logger.error('Failed to gather metrics', { err: String(err) });
            sendText(res, 500, `error gathering metrics: ${String(err)}\n`);
          },
        );
        return;
      case '/proxyMode':
        sendText(res, 200, opts.mode);
        return;
      case '/configz':
        sendJSON(res, 200, JSON.stringify({ [CONFIGZ_GROUP]: opts.config }));
        return;
      case '/healthz':
        sendText(res, 200, 'ok');
        return;
      default:
        sendNotFound(res);
    }
  };
}
