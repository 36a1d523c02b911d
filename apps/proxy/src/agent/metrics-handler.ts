import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { KubeProxyConfiguration, Logger, PromProxyMetrics } from '@kube-proxy/core';
import { pathOf, sendJSON, sendNotFound, sendText } from './http-responses.js';
import type { ZPages } from './zpages.js';

/** A /debug answer: the status and the JSON body. */
export interface DebugResponse {
  readonly status: number;
  readonly body: unknown;
}

/**
 * The /debug/… routes (trace, explain) the app serves on the metrics server: undefined for a path it
 * does not answer.
 */
export type DebugRoute = (path: string, query: URLSearchParams) => Promise<DebugResponse> | undefined;

/** configz's key for kube-proxy's component config (the API group). */
export const CONFIGZ_GROUP = 'kubeproxy.config.k8s.io';

/**
 * The metrics server's routes, as upstream serveMetrics: /metrics, /proxyMode (the mode name as
 * text), /configz (the effective configuration under its group name), the generic /healthz "ok", and
 * the z-pages /statusz and /flagz when their gates are on (`zpages`). Profiling (/debug/pprof) and
 * /metrics/slis are not provided.
 */
export function metricsHandler(opts: {
  readonly metrics: PromProxyMetrics;
  readonly mode: string;
  readonly config: KubeProxyConfiguration;
  readonly logger: Logger;
  readonly debug?: DebugRoute;
  readonly zpages?: ZPages;
}): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req.url);
    if (opts.debug && path.startsWith('/debug/') && serveDebug(opts.debug, path, req, res, opts.logger)) return;
    const zpage = path === '/statusz' ? opts.zpages?.statusz : path === '/flagz' ? opts.zpages?.flagz : undefined;
    if (zpage) {
      sendText(res, 200, zpage());
      return;
    }
    switch (path) {
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

/** Answers a /debug route when `route` has it; false when it does not (a 404 follows). */
function serveDebug(route: DebugRoute, path: string, req: IncomingMessage, res: ServerResponse, logger: Logger): boolean {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const pending = route(path, query);
  if (!pending) return false;
  pending.then(
    ({ status, body }) => sendJSON(res, status, JSON.stringify(body) + '\n'),
    (err: unknown) => {
      logger.error('Failed to answer a debug request', { path, err: String(err) });
      sendJSON(res, 500, JSON.stringify({ error: String(err) }) + '\n');
    },
  );
  return true;
}
