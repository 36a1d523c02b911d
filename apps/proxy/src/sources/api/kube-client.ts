import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import { ipFamilyOf, type ClientConnectionConfiguration, type Logger } from '@kube-proxy/core';
import { KubeApi } from './kube-api.js';
import { apiRequestRateLimiterFor, type ApiRequestRateLimiter } from './api-request-rate-limiter.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

import { KubeClientConfigError } from './api-source-errors.js';

export { KubeClientConfigError };

export interface KubeConfigSource {
  /** --kubeconfig / clientConnection.kubeconfig; "" or undefined for none. */
  readonly kubeconfig?: string;
  /** --master: overrides the kubeconfig's server (or is the only setting, without a kubeconfig). */
  readonly master?: string;
  /** Environment for in-cluster detection (tests pass their own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where the service account token and CA are mounted (tests pass a temp dir). */
  readonly serviceAccountDir?: string;
}

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  readonly mode: 'kubeconfig' | 'master' | 'in-cluster';
}

function checkServerUrl(server: string, origin: string): void {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeClientConfigError(`invalid API server URL ${JSON.stringify(server)} (from ${origin})`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeClientConfigError(`invalid API server URL ${JSON.stringify(server)} (from ${origin}): the scheme must be https or http`);
  }
}

/**
 * client-node refuses plain-http servers unless the cluster says skipTLSVerify; for an http URL there
 * is no TLS to verify, so saying so is the honest way to allow `--master http://...` (local clusters, tests).
 */
function withServer(cluster: Cluster, server: string): Cluster {
  return { ...cluster, server, ...(server.startsWith('http:') ? { skipTLSVerify: true } : {}) };
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Upstream's createClient: with neither a kubeconfig nor --master, the in-cluster service account;
 * otherwise the kubeconfig file (if any) with --master overriding its server.
 */
export function loadKubeConfig(src: KubeConfigSource): LoadedKubeConfig {
  const kubeconfig = src.kubeconfig ?? '';
  const master = src.master ?? '';
  const kc = new KubeConfig();

  if (kubeconfig === '' && master === '') {
    const env = src.env ?? process.env;
    const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
    const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
    if (host === '' || port === '') {
      throw new KubeClientConfigError(
        'no API server configured: neither --kubeconfig nor --master was given, and this is not running in a cluster ' +
          '(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set); give --kubeconfig, --master or --manifests',
      );
    }
    const dir = src.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    const tokenFile = join(dir, 'token');
    const caFile = join(dir, 'ca.crt');
    for (const f of [tokenFile, caFile]) {
      if (!readable(f)) {
        throw new KubeClientConfigError(`in-cluster configuration: cannot read ${f} (is a service account token mounted?)`);
      }
    }
    // Always https, as client-go's InClusterConfig (client-node would guess http for some ports).
    const server = `https://${ipFamilyOf(host) === 'IPv6' ? `[${host}]` : host}:${port}`;
    checkServerUrl(server, 'KUBERNETES_SERVICE_HOST/PORT');
    const cluster: Cluster = { name: 'in-cluster', server, caFile, skipTLSVerify: false };
    // The tokenFile auth provider re-reads the token every minute, so rotated (bound) tokens keep working.
    const user: User = { name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile } } };
    const context: Context = { name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' };
    kc.loadFromOptions({ clusters: [cluster], users: [user], contexts: [context], currentContext: 'in-cluster' });
    return { kubeConfig: kc, server, mode: 'in-cluster' };
  }

  if (kubeconfig === '') {
    checkServerUrl(master, '--master');
    const cluster = withServer({ name: 'master', server: master, skipTLSVerify: false }, master);
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'master' }],
      contexts: [{ name: 'master', cluster: 'master', user: 'master' }],
      currentContext: 'master',
    });
    return { kubeConfig: kc, server: master, mode: 'master' };
  }

  try {
    kc.loadFromFile(kubeconfig);
  } catch (err) {
    throw new KubeClientConfigError(`cannot load kubeconfig ${kubeconfig}: ${(err as Error).message}`);
  }
  const current = kc.getCurrentCluster();
  if (!current) {
    throw new KubeClientConfigError(
      `kubeconfig ${kubeconfig}: no cluster for the current context ${JSON.stringify(kc.getCurrentContext() ?? '')}`,
    );
  }
  if (master !== '') {
    checkServerUrl(master, '--master');
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c.name === current.name ? withServer(c, master) : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
    return { kubeConfig: kc, server: master, mode: 'kubeconfig' };
  }
  checkServerUrl(current.server, `kubeconfig ${kubeconfig}`);
  if (current.server.startsWith('http:') && !current.skipTLSVerify) {
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c.name === current.name ? withServer(c, c.server) : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  }
  return { kubeConfig: kc, server: current.server, mode: 'kubeconfig' };
}

export interface KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  readonly mode: LoadedKubeConfig['mode'];
  /** JSON requests (lists, gets, event posts), rate limited. */
  readonly api: KubeApi;
  /** Shared by the requests and by the informers' watch (re)connects. */
  readonly limiter: ApiRequestRateLimiter;
}

export interface KubeClientOptions extends KubeConfigSource {
  readonly clientConnection: Pick<ClientConnectionConfiguration, 'qps' | 'burst' | 'contentType' | 'acceptContentTypes'>;
  readonly logger: Logger;
  /** Bound on each non-watch request. Default 60 s. */
  readonly requestTimeoutMs?: number;
}

/** Builds the API client from --kubeconfig/--master/in-cluster and clientConnection. */
export function createKubeClient(opts: KubeClientOptions): KubeClient {
  const loaded = loadKubeConfig(opts);
  const { qps, burst, contentType, acceptContentTypes } = opts.clientConnection;
  const limiter = apiRequestRateLimiterFor(qps, burst);
  opts.logger.info('Using the API server', { server: loaded.server, config: loaded.mode });
  opts.logger.verbose('API client rate limit', { qps, burst, unlimited: limiter.unlimited });
  if (/protobuf/i.test(contentType) || /protobuf/i.test(acceptContentTypes)) {
    // The default contentType is protobuf; client-node only speaks JSON, so say so once instead of pretending.
    opts.logger.info('The API client speaks JSON only; protobuf is not used', { contentType, acceptContentTypes });
  }
  return {
    kubeConfig: loaded.kubeConfig,
    server: loaded.server,
    mode: loaded.mode,
    api: new KubeApi(loaded.kubeConfig, limiter, opts.requestTimeoutMs ?? 60_000),
    limiter,
  };
}
