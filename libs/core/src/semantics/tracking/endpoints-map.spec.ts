import type { V1Endpoint, V1EndpointSlice } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '../../host/logger.js';
import { EndpointsChangeTracker } from './endpoints-change-tracker.js';
import { MutableEndpointsMap } from './endpoints-map.js';

const HOST = 'host1';
const START = Date.parse('2024-01-01T00:00:00Z');

type PortSpec = [name: string, port: number, protocol?: string];

function makeSlice(
  namespace: string,
  service: string,
  index: number,
  ports: PortSpec[],
  endpoints: V1Endpoint[],
  annotations: Record<string, string> = {},
): V1EndpointSlice {
  return {
    metadata: {
      namespace,
      name: `${service}-${index}`,
      labels: { 'kubernetes.io/service-name': service },
      annotations,
    },
    addressType: 'IPv4',
    ports: ports.map(([name, port, protocol]) => ({ name, port, protocol: protocol ?? 'UDP' })),
    endpoints,
  };
}

const ep = (ip: string, extra: Partial<V1Endpoint> = {}): V1Endpoint => ({ addresses: [ip], ...extra });
const local = (ip: string, extra: Partial<V1Endpoint> = {}): V1Endpoint => ep(ip, { nodeName: HOST, ...extra });

function setup(logger: Logger = nullLogger) {
  const tracker = new EndpointsChangeTracker({ family: 'IPv4', nodeName: HOST, logger, startTime: START });
  const map = new MutableEndpointsMap();
  return { tracker, map };
}

/** Loads `previous` slices, applies them, then moves to `current` (null = delete, as upstream's tables). */
function transition(previous: Array<V1EndpointSlice | null>, current: Array<V1EndpointSlice | null>) {
  const { tracker, map } = setup();
  for (const slice of previous) if (slice !== null) tracker.endpointSliceUpdate(slice, false);
  map.update(tracker);
  previous.forEach((before, i) => {
    const after = current[i] ?? null;
    if (after !== null) tracker.endpointSliceUpdate(after, false);
    else if (before !== null) tracker.endpointSliceUpdate(before, true);
  });
  const result = map.update(tracker);
  return {
    map,
    result,
    deleted: result.deletedUDPEndpoints.map((d) => `${d.servicePortName.key} ${d.endpoint}`).sort(),
    newlyActive: result.newlyActiveUDPServices.map((n) => n.key).sort(),
  };
}

function contents(map: MutableEndpointsMap): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, endpoints] of map) out[key] = endpoints.map((e) => e.key);
  return out;
}

describe('MutableEndpointsMap.update', () => {
  it('adds a slice: the UDP port becomes newly active', () => {
    const { map, result, deleted, newlyActive } = transition([null], [makeSlice('ns1', 'ep1', 1, [['', 11]], [local('1.1.1.1')])]);
    expect(contents(map)).toEqual({ 'ns1/ep1': ['1.1.1.1:11'] });
    expect(deleted).toEqual([]);
    expect(newlyActive).toEqual(['ns1/ep1']);
    expect(result.updatedServices).toEqual(new Set(['ns1/ep1']));
    expect(map.localReadyEndpoints()).toEqual(new Map([['ns1/ep1', 1]]));
  });

  it('removes a slice: its UDP endpoints are stale', () => {
    const slice = makeSlice('ns1', 'ep1', 1, [['', 11]], [local('1.1.1.1')]);
    const { map, deleted, newlyActive } = transition([slice], [null]);
    expect(contents(map)).toEqual({});
    expect(deleted).toEqual(['ns1/ep1 1.1.1.1:11']);
    expect(newlyActive).toEqual([]);
    expect(map.localReadyEndpoints().size).toBe(0);
  });

  it('adds an IP and a port', () => {
    const { map, deleted, newlyActive } = transition(
      [makeSlice('ns1', 'ep1', 1, [['p11', 11]], [ep('1.1.1.1')])],
      [makeSlice('ns1', 'ep1', 1, [['p11', 11], ['p12', 12]], [ep('1.1.1.1'), local('1.1.1.2')])],
    );
    expect(contents(map)).toEqual({
      'ns1/ep1:p11': ['1.1.1.1:11', '1.1.1.2:11'],
      'ns1/ep1:p12': ['1.1.1.1:12', '1.1.1.2:12'],
    });
    expect(deleted).toEqual([]);
    expect(newlyActive).toEqual(['ns1/ep1:p12']);
    expect(map.localReadyEndpoints()).toEqual(new Map([['ns1/ep1', 1]]));
  });

  it('removes an IP and a port', () => {
    const { deleted, newlyActive } = transition(
      [makeSlice('ns1', 'ep1', 1, [['p11', 11], ['p12', 12]], [ep('1.1.1.1'), local('1.1.1.2')])],
      [makeSlice('ns1', 'ep1', 1, [['p11', 11]], [ep('1.1.1.1')])],
    );
    expect(deleted).toEqual(['ns1/ep1:p11 1.1.1.2:11', 'ns1/ep1:p12 1.1.1.1:12', 'ns1/ep1:p12 1.1.1.2:12']);
    expect(newlyActive).toEqual([]);
  });

  it('adds and removes a second slice of the same service', () => {
    const s1 = makeSlice('ns1', 'ep1', 1, [['p11', 11]], [ep('1.1.1.1')]);
    const s2 = makeSlice('ns1', 'ep1', 2, [['p12', 12]], [ep('1.1.1.2')]);
    const added = transition([s1, null], [s1, s2]);
    expect(contents(added.map)).toEqual({ 'ns1/ep1:p11': ['1.1.1.1:11'], 'ns1/ep1:p12': ['1.1.1.2:12'] });
    expect(added.newlyActive).toEqual(['ns1/ep1:p12']);
    const removed = transition([s1, s2], [s1, null]);
    expect(removed.deleted).toEqual(['ns1/ep1:p12 1.1.1.2:12']);
  });

  it('renames a port: old endpoints stale, new port newly active', () => {
    const { deleted, newlyActive } = transition(
      [makeSlice('ns1', 'ep1', 1, [['p11', 11]], [ep('1.1.1.1')])],
      [makeSlice('ns1', 'ep1', 1, [['p11-2', 11]], [ep('1.1.1.1')])],
    );
    expect(deleted).toEqual(['ns1/ep1:p11 1.1.1.1:11']);
    expect(newlyActive).toEqual(['ns1/ep1:p11-2']);
  });

  it('renumbers a port: old endpoint stale, port was never inactive', () => {
    const { map, deleted, newlyActive } = transition(
      [makeSlice('ns1', 'ep1', 1, [['p11', 11]], [ep('1.1.1.1')])],
      [makeSlice('ns1', 'ep1', 1, [['p11', 22]], [ep('1.1.1.1')])],
    );
    expect(contents(map)).toEqual({ 'ns1/ep1:p11': ['1.1.1.1:22'] });
    expect(deleted).toEqual(['ns1/ep1:p11 1.1.1.1:11']);
    expect(newlyActive).toEqual([]);
  });

  it('treats a port that changed protocol as a different port', () => {
    const { deleted, newlyActive } = transition(
      [makeSlice('ns1', 'ep1', 1, [['p', 53, 'UDP']], [ep('1.1.1.1')])],
      [makeSlice('ns1', 'ep1', 1, [['p', 53, 'TCP']], [ep('1.1.1.1')])],
    );
    expect(deleted).toEqual(['ns1/ep1:p 1.1.1.1:53']);
    expect(newlyActive).toEqual([]);
  });

  it('ignores TCP ports for conntrack purposes', () => {
    const { deleted, newlyActive } = transition([makeSlice('ns1', 'ep1', 1, [['p', 80, 'TCP']], [ep('1.1.1.1')])], [null]);
    expect(deleted).toEqual([]);
    expect(newlyActive).toEqual([]);
  });

  describe('serving, not ready, decides staleness', () => {
    const ready = makeSlice('ns1', 'ep1', 1, [['', 11]], [ep('1.1.1.1', { conditions: { ready: true, serving: true, terminating: false } })]);
    const terminating = makeSlice('ns1', 'ep1', 1, [['', 11]], [
      ep('1.1.1.1', { conditions: { ready: false, serving: true, terminating: true } }),
    ]);
    const notServing = makeSlice('ns1', 'ep1', 1, [['', 11]], [
      ep('1.1.1.1', { conditions: { ready: false, serving: false, terminating: true } }),
    ]);

    it('ready -> terminating but serving: nothing is stale', () => {
      const { deleted, newlyActive, result } = transition([ready], [terminating]);
      expect(deleted).toEqual([]);
      expect(newlyActive).toEqual([]);
      expect(result.updatedServices).toEqual(new Set(['ns1/ep1']));
    });

    it('serving -> not serving: the endpoint is stale', () => {
      expect(transition([terminating], [notServing]).deleted).toEqual(['ns1/ep1 1.1.1.1:11']);
    });

    it('not serving -> serving: the port is newly active', () => {
      const { deleted, newlyActive } = transition([notServing], [ready]);
      expect(deleted).toEqual([]);
      expect(newlyActive).toEqual(['ns1/ep1']);
    });
  });

  it('counts local ready endpoints per service by distinct IP (upstream TestGetLocalEndpointIPs)', () => {
    const { tracker, map } = setup();
    tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 1, [['p11', 11], ['p12', 12]], [ep('1.1.1.1'), local('1.1.1.2')]), false);
    tracker.endpointSliceUpdate(makeSlice('ns2', 'ep2', 1, [['p22', 22]], [local('2.2.2.2'), local('2.2.2.22')]), false);
    tracker.endpointSliceUpdate(makeSlice('ns2', 'ep2', 2, [['p23', 23]], [local('2.2.2.3', { conditions: { ready: false, serving: true, terminating: true } })]), false);
    tracker.endpointSliceUpdate(makeSlice('ns4', 'ep4', 1, [['p44', 44]], [local('4.4.4.4'), ep('4.4.4.5')]), false);
    tracker.endpointSliceUpdate(makeSlice('ns4', 'ep4', 2, [['p45', 45]], [local('4.4.4.6')]), false);
    tracker.endpointSliceUpdate(makeSlice('ns5', 'ep5', 1, [['p', 1]], [local('5.5.5.5', { conditions: { ready: false } })]), false);
    map.update(tracker);
    expect(map.localReadyEndpoints()).toEqual(
      new Map([
        ['ns1/ep1', 1],
        ['ns2/ep2', 2],
        ['ns4/ep4', 2],
      ]),
    );

    // Only the changed service is recounted.
    tracker.endpointSliceUpdate(makeSlice('ns4', 'ep4', 2, [['p45', 45]], []), false);
    map.update(tracker);
    expect(map.localReadyEndpoints().get('ns4/ep4')).toBe(1);
    expect(map.localReadyEndpoints().get('ns2/ep2')).toBe(2);
  });

  it('exposes the ServicePortName behind each key', () => {
    const { tracker, map } = setup();
    tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 1, [['dns', 53, 'UDP']], [ep('1.1.1.1')]), false);
    map.update(tracker);
    expect(map.portName('ns1/ep1:dns')).toEqual({ namespace: 'ns1', name: 'ep1', port: 'dns', protocol: 'UDP', key: 'ns1/ep1:dns' });
  });
});

describe('EndpointsChangeTracker trigger times', () => {
  const at = (iso: string) => ({ 'endpoints.kubernetes.io/last-change-trigger-time': iso });
  const t0 = '2024-01-01T00:00:01Z';
  const t1 = '2024-01-01T00:00:02.123456789Z';
  const t2 = '2024-01-01T01:00:03+01:00';

  it('collects the trigger time of every change per service and hands them over once', () => {
    const { tracker, map } = setup();
    tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 1, [['p', 1]], [ep('1.1.1.1')], at(t0)), false);
    tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 1, [['p', 1]], [ep('1.1.1.2')], at(t1)), false);
    tracker.endpointSliceUpdate(makeSlice('ns2', 'ep2', 1, [['p', 1]], [ep('2.2.2.2')], at(t2)), false);
    const result = map.update(tracker);
    expect(result.lastChangeTriggerTimes).toEqual(
      new Map([
        ['ns1/ep1', [Date.parse('2024-01-01T00:00:01Z'), Date.parse('2024-01-01T00:00:02.123Z')]],
        ['ns2/ep2', [Date.parse('2024-01-01T00:00:03Z')]],
      ]),
    );
    expect(map.update(tracker).lastChangeTriggerTimes.size).toBe(0);
  });

  it('ignores times from before the tracker started and updates that change nothing', () => {
    const { tracker, map } = setup();
    const slice = makeSlice('ns1', 'ep1', 1, [['p', 1]], [ep('1.1.1.1')], at('2023-12-31T23:59:59Z'));
    tracker.endpointSliceUpdate(slice, false);
    map.update(tracker);
    tracker.endpointSliceUpdate({ ...slice, metadata: { ...slice.metadata, annotations: at(t1) } }, false);
    expect(map.update(tracker).lastChangeTriggerTimes.size).toBe(0);
  });

  it('drops pending times of a service when one of its slices is deleted', () => {
    const { tracker, map } = setup();
    const slice = makeSlice('ns1', 'ep1', 1, [['p', 1]], [ep('1.1.1.1')], at(t0));
    tracker.endpointSliceUpdate(slice, false);
    tracker.endpointSliceUpdate(slice, true);
    expect(map.update(tracker).lastChangeTriggerTimes.size).toBe(0);
  });

  it('warns about an unparseable annotation and still applies the slice', () => {
    const warnings: unknown[] = [];
    const logger: Logger = { ...nullLogger, warn: (_m, meta) => void warnings.push(meta) };
    const { tracker, map } = setup(logger);
    expect(tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 1, [['p', 1]], [ep('1.1.1.1')], at('yesterday')), false)).toBe(true);
    expect(map.update(tracker).lastChangeTriggerTimes.size).toBe(0);
    expect(map.size).toBe(1);
    expect(warnings).toEqual([expect.objectContaining({ service: 'ns1/ep1', value: 'yesterday' })]);
  });

  it('counts services with pending changes', () => {
    const { tracker } = setup();
    tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 1, [['p', 1]], [ep('1.1.1.1')]), false);
    tracker.endpointSliceUpdate(makeSlice('ns1', 'ep1', 2, [['p', 1]], [ep('1.1.1.2')]), false);
    tracker.endpointSliceUpdate(makeSlice('ns2', 'ep2', 1, [['p', 1]], [ep('2.2.2.2')]), false);
    expect(tracker.pendingCount()).toBe(2);
    expect(tracker.pendingNames().sort()).toEqual(['ns1/ep1', 'ns2/ep2']);
  });
});
