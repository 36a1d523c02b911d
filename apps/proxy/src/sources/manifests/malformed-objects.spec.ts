import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { container as rootContainer } from 'tsyringe';
import { PROXY_METRICS, PromProxyMetrics } from '@kube-proxy/core';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { ObjectValidation } from '../validating-handlers.js';
import { ManifestSource } from './manifest-source.js';

describe('manifest objects that cannot even be identified', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-malformed-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('are reported by kind (one warning each) and counted as invalid objects; other kinds are not', async () => {
    await writeFile(
      join(dir, 'a.yaml'),
      [
        'apiVersion: v1\nkind: Service\nmetadata: {namespace: default}\nspec: {ports: [{port: 80}]}',
        'apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: x, namespace: default}',
        'apiVersion: v1\nkind: Node\nmetadata: {name: node-1, labels: [a]}',
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}',
        'just: text',
      ].join('\n---\n'),
    );
    const logger = new RecordingLogger();
    const metrics = new PromProxyMetrics({ mode: 'iptables', defaultMetrics: false });
    const scope = rootContainer.createChildContainer();
    scope.register(PROXY_METRICS, { useValue: metrics });
    const validation = new ObjectValidation(logger);
    const seen: string[] = [];
    const source = new ManifestSource({
      path: dir,
      nodeName: 'node-1',
      serviceProxyName: '',
      logger,
      onMalformed: (kind) => {
        seen.push(kind);
        validation.countInvalid(kind);
      },
    });
    await source.loadInitial();
    source.stop();
    expect(seen).toEqual(['Service', 'EndpointSlice', 'Node']);
    // The document without a kind is malformed too, but not one of the proxy's kinds.
    expect(logger.messages('warn').filter((m) => m.startsWith('Skipping malformed object'))).toHaveLength(4);

    validation.useMetricsFrom(scope);
    const json = await metrics.registry.getSingleMetric('kubeproxy_invalid_objects_total')!.get();
    expect(Object.fromEntries(json.values.map((v) => [v.labels['kind'], v.value]))).toEqual({ Service: 1, EndpointSlice: 1, Node: 1 });
  });
});
