import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nullLogger, type Logger } from '@kube-proxy/core';
import { TestApiServer } from '@kube-proxy/testing-apiserver';
import { createKubeClient, KubeClientConfigError, loadKubeConfig } from './kube-client.js';
import { ApiError } from './kube-api.js';

const JSON_ONLY = { qps: -1, burst: 0, contentType: 'application/json', acceptContentTypes: '' };

describe('kube client configuration', () => {
  let server: TestApiServer;
  let dir: string;
  const infos: Array<[string, unknown]> = [];
  const logger: Logger = { ...nullLogger, info: (m, meta) => void infos.push([m, meta]), child: () => logger };

  beforeAll(async () => {
    server = await TestApiServer.start();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-kubeclient-'));
    infos.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function kubeconfigFile(serverUrl: string): Promise<string> {
    const file = join(dir, 'kubeconfig');
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: c1`,
        `  cluster: {server: "${serverUrl}"}`,
        'users:',
        '- name: u1',
        '  user: {token: secret-token}',
        'contexts:',
        '- name: ctx',
        '  context: {cluster: c1, user: u1}',
        'current-context: ctx',
      ].join('\n'),
    );
    return file;
  }

  it('uses a kubeconfig file: its server and its credentials', async () => {
    const client = createKubeClient({ kubeconfig: await kubeconfigFile(server.url), clientConnection: JSON_ONLY, logger });
    expect(client.mode).toBe('kubeconfig');
    const list = await client.api.request<{ kind: string }>('GET', '/api/v1/nodes');
    expect(list.kind).toBe('NodeList');
    expect(server.requests.at(-1)?.authorization).toBe('Bearer secret-token');
  });

  it('--master overrides the kubeconfig server and keeps its credentials', async () => {
    const file = await kubeconfigFile('https://unreachable.invalid:6443');
    const client = createKubeClient({ kubeconfig: file, master: server.url, clientConnection: JSON_ONLY, logger });
    expect(client.server).toBe(server.url);
    await client.api.request('GET', '/api/v1/services');
    expect(server.requests.at(-1)?.authorization).toBe('Bearer secret-token');
  });

  it('--master alone: that server, anonymously (plain http allowed)', async () => {
    const client = createKubeClient({ master: server.url, clientConnection: JSON_ONLY, logger });
    expect(client.mode).toBe('master');
    await client.api.request('GET', '/api/v1/services', { query: { labelSelector: 'a=b' } });
    const last = server.requests.at(-1);
    expect(last?.authorization).toBeUndefined();
    expect(last?.query).toEqual({ labelSelector: 'a=b' });
  });

  it('in-cluster when neither is given: service host/port env and the mounted token and CA', async () => {
    await writeFile(join(dir, 'token'), 'sa-token');
    await writeFile(join(dir, 'ca.crt'), 'not-a-real-ca');
    const c = loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir });
    expect(c.mode).toBe('in-cluster');
    expect(c.server).toBe('https://10.96.0.1:443');
    expect(c.kubeConfig.getCurrentCluster()?.caFile).toBe(join(dir, 'ca.crt'));
    expect(c.kubeConfig.getCurrentUser()?.authProvider?.config?.tokenFile).toBe(join(dir, 'token'));
    const v6 = loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, serviceAccountDir: dir });
    expect(v6.server).toBe('https://[fd00::1]:6443');
  });

  it('says clearly when nothing works', async () => {
    expect(() => loadKubeConfig({ env: {} })).toThrow(KubeClientConfigError);
    expect(() => loadKubeConfig({ env: {} })).toThrow(/--kubeconfig, --master or --manifests/);
    expect(() => loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir })).toThrow(
      /cannot read .*token/,
    );
    expect(() => loadKubeConfig({ kubeconfig: join(dir, 'missing') })).toThrow(/cannot load kubeconfig/);
    expect(() => loadKubeConfig({ master: 'ftp://x' })).toThrow(/scheme must be https or http/);
    expect(() => loadKubeConfig({ master: 'not a url' })).toThrow(/invalid API server URL/);
  });

  it('accepts the protobuf content type but says it speaks JSON', () => {
    createKubeClient({ master: server.url, clientConnection: { ...JSON_ONLY, contentType: 'application/vnd.kubernetes.protobuf' }, logger });
    expect(infos.map(([m]) => m)).toContain('The API client speaks JSON only; protobuf is not used');
  });

  it('turns error responses into ApiError with the Status message', async () => {
    const client = createKubeClient({ master: server.url, clientConnection: JSON_ONLY, logger });
    server.failRequests(1, 403);
    const err = await client.api.request('GET', '/api/v1/services').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).statusCode).toBe(403);
    expect((err as ApiError).message).toMatch(/HTTP 403 Forbidden: injected failure/);
  });

  it('bounds requests with a timeout', async () => {
    const client = createKubeClient({ master: server.url, clientConnection: JSON_ONLY, logger, requestTimeoutMs: 100 });
    server.delayResponses(1000);
    try {
      await expect(client.api.request('GET', '/api/v1/services')).rejects.toThrow(/abort|timeout/i);
    } finally {
      server.delayResponses(0);
    }
  });
});
