import type { ServerResponse } from 'node:http';
import { sendJSON } from './http-responses.js';

/**
 * A health-check node port's answer (upstream hcHandler): 200 when the node has local endpoints and
 * the proxy is healthy, else 503. The endpoint count doubles as a load-balancing weight for load
 * balancers that read X-Load-Balancing-Endpoint-Weight. The body is upstream's tab-indented JSON.
 */
export function sendServiceHealth(
  res: ServerResponse,
  service: { readonly namespace: string; readonly name: string },
  localEndpoints: number,
  serviceProxyHealthy: boolean,
): void {
  const body = JSON.stringify(
    { service: { namespace: service.namespace, name: service.name }, localEndpoints, serviceProxyHealthy },
    null,
    '\t',
  );
  sendJSON(res, localEndpoints !== 0 && serviceProxyHealthy ? 200 : 503, body, {
    'X-Load-Balancing-Endpoint-Weight': String(localEndpoints),
  });
}
