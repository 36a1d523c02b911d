import type { V1Endpoint, V1EndpointSlice } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '../../host/logger.js';
import { EndpointSliceCache } from './endpoint-slice-cache.js';

type PortSpec = [name: string | undefined, port: number, protocol?: string];

function makeSlice(
  namespace: string,
  service: string,
  index: number,
  ports: PortSpec[],
  endpoints: V1Endpoint[],
  addressType = 'IPv4',
): V1EndpointSlice {
  return {
    metadata: {
      namespace,
      name: `${service}-${index}`,
      labels: { 'kubernetes.io/service-name': service },
    },
    addressType,
    ports: ports.map(([name, port, protocol]) => ({ name, port, protocol: protocol ?? 'TCP' })),
    endpoints,
  };
}

function recordingLogger(): Logger & { warnings: Array<Record<string, unknown> | undefined> } {
  const warnings: Array<Record<string, unknown> | undefined> = [];
  const logger = { ...nullLogger, warnings, warn: (_m: string, meta?: Record<string, unknown>) => warnings.push(meta) };
  return { ...logger, child: () => logger };
}

function newCache(logger: Logger = nullLogger, family: 'IPv4' | 'IPv6' = 'IPv4'): EndpointSliceCache {
  return new EndpointSliceCache({ family, nodeName: 'host1', logger });
}

/** Applies pending changes and returns `portKey -> endpoint keys` of one service. */
function checkout(cache: EndpointSliceCache, service: string): Record<string, string[]> {
  const change = cache.checkoutChanges().get(service);
  const out: Record<string, string[]> = {};
  for (const [key, { endpoints }] of change?.current ?? []) out[key] = endpoints.map((e) => e.key);
  return out;
}

describe('EndpointSliceCache', () => {
  it('merges several slices of one service and de-duplicates endpoints by ip:port', () => {
    const cache = newCache();
    cache.updatePending(
      makeSlice('ns1', 'svc1', 1, [['port-0', 80], ['port-1', 443]], [{ addresses: ['10.0.1.1'] }, { addresses: ['10.0.1.2'] }]),
      false,
    );
    cache.updatePending(
      makeSlice('ns1', 'svc1', 2, [['port-0', 80], ['port-1', 443]], [{ addresses: ['10.0.1.2'] }, { addresses: ['10.0.1.3'] }]),
      false,
    );
    expect(checkout(cache, 'ns1/svc1')).toEqual({
      'ns1/svc1:port-0': ['10.0.1.1:80', '10.0.1.2:80', '10.0.1.3:80'],
      'ns1/svc1:port-1': ['10.0.1.1:443', '10.0.1.2:443', '10.0.1.3:443'],
    });
  });

  it('keeps the same IP under different port numbers apart', () => {
    const cache = newCache();
    cache.updatePending(makeSlice('ns1', 'svc1', 1, [['http', 80]], [{ addresses: ['10.0.1.1'] }]), false);
    cache.updatePending(makeSlice('ns1', 'svc1', 2, [['http', 8080]], [{ addresses: ['10.0.1.1'] }]), false);
    expect(checkout(cache, 'ns1/svc1')).toEqual({ 'ns1/svc1:http': ['10.0.1.1:80', '10.0.1.1:8080'] });
  });

  it('prefers the non-terminating copy of a duplicated endpoint', () => {
    const terminating: V1Endpoint = {
      addresses: ['10.0.1.1'],
      conditions: { ready: false, serving: true, terminating: true },
    };
    for (const order of [
      [terminating, { addresses: ['10.0.1.1'] }],
      [{ addresses: ['10.0.1.1'] }, terminating],
    ]) {
      const cache = newCache();
      cache.updatePending(makeSlice('ns1', 'svc1', 1, [['p', 80]], [order[0]!]), false);
      cache.updatePending(makeSlice('ns1', 'svc1', 2, [['p', 80]], [order[1]!]), false);
      const [ep] = cache.checkoutChanges().get('ns1/svc1')!.current.get('ns1/svc1:p')!.endpoints;
      expect(ep).toMatchObject({ key: '10.0.1.1:80', ready: true, terminating: false });
    }
  });

  it('applies upstream nil defaults to conditions and copies topology fields', () => {
    const cache = newCache();
    cache.updatePending(
      makeSlice(
        'ns1',
        'svc1',
        1,
        [['', 80]],
        [
          { addresses: ['10.0.1.1'], nodeName: 'host1', zone: 'zone-a', hints: { forZones: [{ name: 'zone-a' }] } },
          { addresses: ['10.0.1.2'], nodeName: 'host2', conditions: { ready: false }, hints: { forNodes: [{ name: 'host2' }] } },
          { addresses: ['10.0.1.3'], conditions: { ready: false, serving: true, terminating: true } },
          { addresses: ['10.0.1.4'], hints: { forZones: [] } },
        ],
      ),
      false,
    );
    const endpoints = cache.checkoutChanges().get('ns1/svc1')!.current.get('ns1/svc1')!.endpoints;
    expect(endpoints.map((e) => [e.key, e.ready, e.serving, e.terminating, e.isLocal])).toEqual([
      ['10.0.1.1:80', true, true, false, true],
      ['10.0.1.2:80', false, true, false, false],
      ['10.0.1.3:80', false, true, true, false],
      ['10.0.1.4:80', true, true, false, false],
    ]);
    expect(endpoints[0]).toMatchObject({ nodeName: 'host1', zone: 'zone-a', zoneHints: new Set(['zone-a']), nodeHints: null });
    expect(endpoints[1]).toMatchObject({ nodeName: 'host2', zone: '', zoneHints: null, nodeHints: new Set(['host2']) });
    expect(endpoints[3]?.zoneHints).toBeNull();
  });

  it('never marks endpoints local when the node name is empty', () => {
    const cache = new EndpointSliceCache({ family: 'IPv4', nodeName: '', logger: nullLogger });
    cache.updatePending(makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['10.0.1.1'], nodeName: '' }]), false);
    expect(cache.checkoutChanges().get('ns1/svc1')!.current.get('ns1/svc1:p')!.endpoints[0]?.isLocal).toBe(false);
  });

  it('brackets and canonicalises IPv6 endpoints', () => {
    const cache = newCache(nullLogger, 'IPv6');
    cache.updatePending(makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['FD00:0::1'] }], 'IPv6'), false);
    expect(checkout(cache, 'ns1/svc1')).toEqual({ 'ns1/svc1:p': ['[fd00::1]:80'] });
  });

  it.each([
    ['the other family', 'IPv6'],
    ['FQDN', 'FQDN'],
  ])('ignores slices of %s', (_name, addressType) => {
    const cache = newCache();
    expect(cache.updatePending(makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['10.0.0.1'] }], addressType), false)).toBeUndefined();
    expect(cache.pendingCount()).toBe(0);
  });

  it('skips a slice without the service-name label with a warning', () => {
    const logger = recordingLogger();
    const cache = newCache(logger);
    const slice = makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['10.0.0.1'] }]);
    slice.metadata!.labels = {};
    expect(cache.updatePending(slice, false)).toBeUndefined();
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatchObject({ endpointSlice: 'ns1/svc1-1' });
  });

  it('drops invalid ports and endpoints with warnings and keeps the rest', () => {
    const logger = recordingLogger();
    const cache = newCache(logger);
    cache.updatePending(
      makeSlice(
        'ns1',
        'svc1',
        1,
        [[undefined, 80], ['zero', 0], ['icmp', 81, 'ICMP'], ['ok', 82]],
        [{ addresses: [] }, { addresses: ['not-an-ip'] }, { addresses: ['fd00::1'] }, { addresses: ['10.0.0.1'] }],
      ),
      false,
    );
    expect(checkout(cache, 'ns1/svc1')).toEqual({ 'ns1/svc1:ok': ['10.0.0.1:82'] });
    expect(logger.warnings.map((w) => w?.field)).toEqual([
      'ports[0].name',
      'ports[1].port',
      'ports[2].protocol',
      'endpoints[0].addresses',
      'endpoints[1].addresses',
      'endpoints[2].addresses',
    ]);
  });

  it('omits ports without endpoints', () => {
    const cache = newCache();
    cache.updatePending(makeSlice('ns1', 'svc1', 1, [['p', 80]], []), false);
    expect(checkout(cache, 'ns1/svc1')).toEqual({});
  });

  describe('change detection', () => {
    const slice = makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['10.0.0.1'] }]);

    it('reports an unchanged update and a removal of an unknown slice as no change', () => {
      const cache = newCache();
      expect(cache.updatePending(slice, true)).toBeUndefined();
      expect(cache.updatePending(slice, false)).toEqual({ service: 'ns1/svc1', slice: 'svc1-1' });
      expect(cache.updatePending(structuredClone(slice), false)).toBeUndefined();
      cache.checkoutChanges();
      const resynced = structuredClone(slice);
      resynced.metadata!.resourceVersion = '42';
      expect(cache.updatePending(resynced, false)).toBeUndefined();
      expect(cache.pendingCount()).toBe(0);
    });

    it('hands the previous and current endpoints of each changed service over once', () => {
      const cache = newCache();
      cache.updatePending(slice, false);
      const first = cache.checkoutChanges().get('ns1/svc1')!;
      expect(first.previous.size).toBe(0);
      expect(first.current.size).toBe(1);
      expect(cache.checkoutChanges().size).toBe(0);

      cache.updatePending(slice, true);
      const second = cache.checkoutChanges().get('ns1/svc1')!;
      expect(second.previous).toBe(first.current);
      expect(second.current.size).toBe(0);
    });

    it('keeps an endpoint that moved between slices', () => {
      const cache = newCache();
      const a = makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }]);
      cache.updatePending(a, false);
      cache.checkoutChanges();
      cache.updatePending(makeSlice('ns1', 'svc1', 2, [['p', 80]], [{ addresses: ['10.0.0.2'] }]), false);
      cache.updatePending(makeSlice('ns1', 'svc1', 1, [['p', 80]], [{ addresses: ['10.0.0.1'] }]), false);
      expect(checkout(cache, 'ns1/svc1')).toEqual({ 'ns1/svc1:p': ['10.0.0.1:80', '10.0.0.2:80'] });
    });
  });
});
