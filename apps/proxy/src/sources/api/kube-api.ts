import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ApiRequestRateLimiter } from './api-request-rate-limiter.js';

/** A non-2xx answer from the API server; `statusCode` as client-node's watch errors carry it. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly statusCode: number,
    readonly reason: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiRequestOptions {
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /** The body's media type; PATCH needs one naming the patch kind (default application/json). */
  readonly contentType?: string;
}

const USER_AGENT = 'kube-proxy-ts';

/**
 * Plain JSON requests (list, get, create, patch) with the KubeConfig's server, TLS and credentials.
 * client-node's generated API classes would convert objects into model classes (Date fields etc.),
 * while its Watch hands out parsed JSON; using raw JSON for lists too gives handlers one object
 * shape from every path. Every request is rate limited and bounded by a timeout.
 */
export class KubeApi {
  constructor(
    private readonly kc: KubeConfig,
    private readonly limiter: ApiRequestRateLimiter,
    private readonly timeoutMs: number,
  ) {}

  /** The API server URL requests go to. */
  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '';
  }

  async request<T>(method: 'GET' | 'POST' | 'PATCH', path: string, opts: ApiRequestOptions = {}): Promise<T> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('no current cluster in the kubeconfig');
    const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(this.timeoutMs)]) : AbortSignal.timeout(this.timeoutMs);
    await this.limiter.acquire(signal);

    // Same URL construction as client-node's Watch, so a server URL with a path prefix works for both.
    const url = new URL(cluster.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, v);
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const reqOpts: RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        'User-Agent': USER_AGENT,
        ...(body !== undefined ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}),
      },
    };
    // Fills in CA, client certificates, bearer token / auth providers and the (proxy) agent.
    await this.kc.applyToHTTPSOptions(reqOpts);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;

    return new Promise<T>((resolve, reject) => {
      const req = send(url, { ...reqOpts, signal }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            reject(toApiError(method, url, status, text));
            return;
          }
          try {
            resolve(JSON.parse(text) as T);
          } catch (err) {
            reject(new Error(`${method} ${url.pathname}: invalid JSON from the API server: ${(err as Error).message}`));
          }
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

function toApiError(method: string, url: URL, status: number, text: string): ApiError {
  let reason: string | undefined;
  let message = text.slice(0, 500);
  try {
    const s = JSON.parse(text) as { kind?: string; reason?: string; message?: string };
    if (s.kind === 'Status') {
      reason = s.reason;
      message = s.message ?? message;
    }
  } catch {
    // Not a Status object (a proxy's HTML error page, say): keep the raw text.
  }
  return new ApiError(status, reason, `${method} ${url.pathname}: HTTP ${status}${reason ? ` ${reason}` : ''}: ${message}`);
}
