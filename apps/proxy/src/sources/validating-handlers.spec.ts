import { container as rootContainer } from 'tsyringe';
import { PROXY_METRICS, PromProxyMetrics, type EndpointSliceHandler, type NodeHandler, type ServiceHandler, type V1EndpointSlice, type V1Node, type V1Service } from '@kube-proxy/core';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { ObjectValidation } from './validating-handlers.js';

type Call = readonly [string, ...unknown[]];

/** A Provider stand-in that records every handler call. */
function recorder(): { calls: Call[]; handlers: { services: ServiceHandler; endpointSlices: EndpointSliceHandler; node: NodeHandler } } {
  const calls: Call[] = [];
  const rec =
    (name: string) =>
    (...args: unknown[]) =>
      void calls.push([name, ...args]);
  return {
    calls,
    handlers: {
      services: { onServiceAdd: rec('svc.add'), onServiceUpdate: rec('svc.update'), onServiceDelete: rec('svc.delete'), onServicesSynced: rec('svc.synced') },
      endpointSlices: {
        onEndpointSliceAdd: rec('eps.add'),
        onEndpointSliceUpdate: rec('eps.update'),
        onEndpointSliceDelete: rec('eps.delete'),
        onEndpointSlicesSynced: rec('eps.synced'),
      },
      node: { onNodeAdd: rec('node.add'), onNodeUpdate: rec('node.update'), onNodeDelete: rec('node.delete'), onNodeSynced: rec('node.synced') },
    },
  };
}

function service(name: string, port: unknown = 80, portName = 'http'): V1Service {
  return { metadata: { name, namespace: 'default' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: portName, port }] } } as V1Service;
}

function slice(name: string, address: string): V1EndpointSlice {
  return {
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address] }],
  } as V1EndpointSlice;
}

function node(name: string, podCIDR = '10.244.1.0/24'): V1Node {
  return { metadata: { name }, spec: { podCIDR } } as V1Node;
}

async function counts(metrics: PromProxyMetrics): Promise<Record<string, number>> {
  const json = await metrics.registry.getSingleMetric('kubeproxy_invalid_objects_total')!.get();
  return Object.fromEntries(json.values.map((v) => [String(v.labels['kind']), v.value]));
}

function setup() {
  const logger = new RecordingLogger();
  const metrics = new PromProxyMetrics({ mode: 'iptables', defaultMetrics: false });
  const scope = rootContainer.createChildContainer();
  scope.register(PROXY_METRICS, { useValue: metrics });
  const validation = new ObjectValidation(logger);
  const r = recorder();
  return { logger, metrics, scope, validation, calls: r.calls, inner: r.handlers };
}

const warnings = (logger: RecordingLogger) => logger.entries.filter((e) => e.level === 'warn');

describe('ObjectValidation (validation at the edge of every source)', () => {
  it('delivers valid objects unchanged and skips an invalid add with one warning naming it and its field, counted by kind', async () => {
    const { logger, metrics, scope, validation, calls, inner } = setup();
    validation.useMetricsFrom(scope);
    const h = validation.wrap(inner);
    const good = service('web');
    const evil = service('evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#', 80, 'x" -j ACCEPT #');
    h.services.onServiceAdd(good);
    h.services.onServiceAdd(evil);
    h.services.onServicesSynced();

    expect(calls).toEqual([['svc.add', good], ['svc.synced']]);
    const [w, ...more] = warnings(logger);
    expect(more).toEqual([]);
    expect(w.message).toContain('Skipping invalid object');
    expect(w.meta).toMatchObject({ kind: 'Service', object: 'default/evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#', field: 'metadata.name, spec.ports[0].name' });
    expect(w.meta['error']).toContain('spec.ports[0].name: Invalid value');
    expect(await counts(metrics)).toEqual({ Service: 1, EndpointSlice: 0, Node: 0 });
  });

  it('keeps the last valid version on an invalid update, and deletes with that version', async () => {
    const { logger, metrics, scope, validation, calls, inner } = setup();
    validation.useMetricsFrom(scope);
    const h = validation.wrap(inner);
    const v1 = service('web', 80);
    const bad = service('web', 0);
    const v3 = service('web', 81);
    h.services.onServiceAdd(v1);
    h.services.onServiceUpdate(v1, bad);
    expect(calls).toEqual([['svc.add', v1]]);
    expect(warnings(logger)).toHaveLength(1);
    expect(warnings(logger)[0].message).toContain('keeping its last valid version');
    expect(warnings(logger)[0].meta).toMatchObject({ kind: 'Service', object: 'default/web', field: 'spec.ports[0].port' });

    // The next valid version is an update from the version the handler has, not from the refused one.
    h.services.onServiceUpdate(bad, v3);
    expect(calls[1]).toEqual(['svc.update', v1, v3]);
    h.services.onServiceUpdate(v3, bad);
    h.services.onServiceDelete(bad);
    expect(calls[2]).toEqual(['svc.delete', v3]);
    expect(await counts(metrics)).toEqual({ Service: 2, EndpointSlice: 0, Node: 0 });
  });

  it('delivers an object that was never delivered as an add once an update makes it valid; drops its delete otherwise', () => {
    const { validation, calls, inner, scope } = setup();
    validation.useMetricsFrom(scope);
    const h = validation.wrap(inner);
    const bad = slice('web-1', '10.244.1.300');
    const good = slice('web-1', '10.244.1.3');
    h.endpointSlices.onEndpointSliceAdd(bad);
    h.endpointSlices.onEndpointSliceUpdate(bad, good);
    expect(calls).toEqual([['eps.add', good]]);

    const other = slice('web-2', 'bogus');
    h.endpointSlices.onEndpointSliceAdd(other);
    h.endpointSlices.onEndpointSliceDelete(other);
    expect(calls).toEqual([['eps.add', good]]);
  });

  it('reports the same refused object once, however often a source re-delivers it (resync)', async () => {
    const { logger, metrics, scope, validation, calls, inner } = setup();
    validation.useMetricsFrom(scope);
    const h = validation.wrap(inner);
    const bad = service('Web');
    h.services.onServiceAdd(bad);
    h.services.onServiceUpdate(bad, bad);
    h.services.onServiceUpdate(bad, bad);
    expect(calls).toEqual([]);
    expect(warnings(logger)).toHaveLength(1);
    // A different refused version is a new skip.
    h.services.onServiceUpdate(bad, service('Web', 0));
    expect(warnings(logger)).toHaveLength(2);
    expect(await counts(metrics)).toEqual({ Service: 2, EndpointSlice: 0, Node: 0 });
  });

  it('ignores an invalid Node for the node IPs, and counts it once the metrics are known, once', async () => {
    const { logger, metrics, scope, validation, calls, inner } = setup();
    const bad = node('node-1', '10.244.1.0/24 -j ACCEPT');
    expect(validation.admitNode(bad)).toBeUndefined();
    expect(validation.admitNode(undefined)).toBeUndefined();
    expect(warnings(logger)).toHaveLength(1);
    expect(warnings(logger)[0].meta).toMatchObject({ kind: 'Node', object: 'node-1', field: 'spec.podCIDR' });

    validation.useMetricsFrom(scope);
    expect(await counts(metrics)).toEqual({ Service: 0, EndpointSlice: 0, Node: 1 });
    // The source then delivers that same object: not delivered, not reported again.
    const h = validation.wrap(inner);
    h.node.onNodeAdd(bad);
    h.node.onNodeSynced();
    expect(calls).toEqual([['node.synced']]);
    expect(warnings(logger)).toHaveLength(1);
    expect(await counts(metrics)).toEqual({ Service: 0, EndpointSlice: 0, Node: 1 });

    const good = node('node-1');
    expect(validation.admitNode(good)).toBe(good);
    h.node.onNodeUpdate(bad, good);
    expect(calls).toEqual([['node.synced'], ['node.add', good]]);
  });

  it('counts nothing and still skips when no metrics are registered', () => {
    const { logger, validation, calls, inner } = setup();
    validation.useMetricsFrom(rootContainer.createChildContainer());
    const h = validation.wrap(inner);
    h.endpointSlices.onEndpointSliceAdd(slice('x', 'y'));
    expect(calls).toEqual([]);
    expect(warnings(logger)).toHaveLength(1);
  });

  it('clips a huge name and lists at most 8 errors in the one log line', () => {
    const { logger, validation, inner, scope } = setup();
    validation.useMetricsFrom(scope);
    const h = validation.wrap(inner);
    const huge = { ...slice('a'.repeat(5000), 'x'), endpoints: Array.from({ length: 20 }, (_, i) => ({ addresses: [`bad-${i}`] })) } as V1EndpointSlice;
    h.endpointSlices.onEndpointSliceAdd(huge);
    const [w] = warnings(logger);
    expect(String(w.meta['object']).length).toBeLessThan(400);
    expect(String(w.meta['error'])).toContain('…and 13 more');
  });
});
