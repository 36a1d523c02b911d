import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '../host/logger.js';
import { ProxyState } from './proxy-state.js';

const ZONE = 'topology.kubernetes.io/zone';

function recordingLogger(): Logger & { warnings: string[]; errors: string[] } {
  const warnings: string[] = [];
  const errors: string[] = [];
  const logger = {
    ...nullLogger,
    warnings,
    errors,
    warn: (message: string) => void warnings.push(message),
    error: (message: string) => void errors.push(message),
    child: () => logger,
  };
  return logger;
}

function setup(logger: Logger = nullLogger) {
  const onChange = { calls: 0 };
  const state = new ProxyState({ family: 'IPv4', nodeName: 'node-1', logger, onChange: () => void onChange.calls++ });
  return { state, onChange };
}

const service: V1Service = {
  metadata: { namespace: 'ns', name: 'dns' },
  spec: {
    type: 'ClusterIP',
    clusterIP: '172.30.0.10',
    clusterIPs: ['172.30.0.10'],
    ipFamilies: ['IPv4'],
    ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
  },
};

const slice: V1EndpointSlice = {
  metadata: { namespace: 'ns', name: 'dns-abc', labels: { 'kubernetes.io/service-name': 'dns' } },
  addressType: 'IPv4',
  ports: [{ name: 'dns', port: 5353, protocol: 'UDP' }],
  endpoints: [{ addresses: ['10.1.0.5'], nodeName: 'node-1' }],
};

const node = (labels: Record<string, string>, name = 'node-1'): V1Node => ({ metadata: { name, labels } });

describe('ProxyState', () => {
  it('is initialized only after both initial lists were delivered', () => {
    const { state, onChange } = setup();
    expect(state.isInitialized()).toBe(false);
    state.onServicesSynced();
    expect(state.isInitialized()).toBe(false);
    state.onEndpointSlicesSynced();
    expect(state.isInitialized()).toBe(true);
    expect(onChange.calls).toBe(2);
  });

  it('feeds Service and EndpointSlice events to the trackers and applies them on request', () => {
    const { state, onChange } = setup();
    state.onServiceAdd(service);
    state.onEndpointSliceAdd(slice);
    expect(onChange.calls).toBe(2);
    expect(state.pendingServiceChanges()).toBe(1);
    expect(state.pendingEndpointChanges()).toBe(1);

    const applied = state.applyPendingChanges();
    expect(applied.services.updatedServices).toEqual(new Set(['ns/dns']));
    expect(applied.endpoints.updatedServices).toEqual(new Set(['ns/dns']));
    expect(applied.endpoints.newlyActiveUDPServices.map((n) => n.key)).toEqual(['ns/dns:dns']);
    expect(state.serviceMap.get('ns/dns:dns')).toMatchObject({ clusterIP: '172.30.0.10', port: 53 });
    expect(state.endpointsMap.get('ns/dns:dns')?.map((e) => e.key)).toEqual(['10.1.0.5:5353']);
    expect(state.localReadyEndpoints()).toEqual(new Map([['ns/dns', 1]]));
    expect(state.pendingServiceChanges()).toBe(0);
    expect(state.pendingEndpointChanges()).toBe(0);
  });

  it('does not request a sync for events that change nothing', () => {
    const { state, onChange } = setup();
    state.onServiceAdd(service);
    state.onEndpointSliceAdd(slice);
    state.applyPendingChanges();
    onChange.calls = 0;

    state.onServiceUpdate(service, structuredClone(service));
    state.onEndpointSliceUpdate(slice, structuredClone(slice));
    state.onEndpointSliceAdd({ ...slice, addressType: 'IPv6' });
    expect(onChange.calls).toBe(0);
  });

  it('coalesces an add and delete between syncs', () => {
    const { state } = setup();
    state.onServiceAdd(service);
    state.onServiceDelete(service);
    expect(state.pendingServiceChanges()).toBe(0);
    expect(state.applyPendingChanges().services.updatedServices.size).toBe(0);
  });

  it('reports deletions for conntrack cleanup', () => {
    const { state } = setup();
    state.onServiceAdd(service);
    state.onEndpointSliceAdd(slice);
    state.applyPendingChanges();
    state.onServiceDelete(service);
    state.onEndpointSliceDelete(slice);
    const applied = state.applyPendingChanges();
    expect(applied.services.deletedUDPClusterIPs).toEqual(new Set(['172.30.0.10']));
    expect(applied.endpoints.deletedUDPEndpoints.map((d) => d.endpoint)).toEqual(['10.1.0.5:5353']);
    expect(state.serviceMap.size).toBe(0);
    expect(state.endpointsMap.size).toBe(0);
  });

  it('exposes health check node ports', () => {
    const { state } = setup();
    state.onServiceAdd({
      metadata: { namespace: 'ns', name: 'lb' },
      spec: {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.11',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31000,
        ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }],
      },
    });
    state.applyPendingChanges();
    expect(state.healthCheckNodePorts()).toEqual(new Map([['ns/lb', 31000]]));
  });

  describe('node topology', () => {
    it('flags a change of the zone label once and requests a sync', () => {
      const { state, onChange } = setup();
      state.onNodeAdd(node({ [ZONE]: 'zone-a', 'kubernetes.io/hostname': 'node-1' }));
      expect(state.nodeLabels[ZONE]).toBe('zone-a');
      expect(onChange.calls).toBe(1);
      expect(state.takeTopologyChanged()).toBe(true);
      expect(state.takeTopologyChanged()).toBe(false);

      state.onNodeUpdate(node({ [ZONE]: 'zone-a' }), node({ [ZONE]: 'zone-b' }));
      expect(state.takeTopologyChanged()).toBe(true);
      expect(onChange.calls).toBe(2);
    });

    it('keeps other label changes without flagging topology', () => {
      const { state, onChange } = setup();
      state.onNodeAdd(node({ [ZONE]: 'zone-a' }));
      state.takeTopologyChanged();
      state.onNodeUpdate(node({ [ZONE]: 'zone-a' }), node({ [ZONE]: 'zone-a', 'topology.kubernetes.io/region': 'r2', app: 'x' }));
      expect(state.nodeLabels).toEqual({ [ZONE]: 'zone-a', 'topology.kubernetes.io/region': 'r2', app: 'x' });
      expect(state.takeTopologyChanged()).toBe(false);
      expect(onChange.calls).toBe(1);
    });

    it('clears the labels when the node is deleted', () => {
      const { state } = setup();
      state.onNodeAdd(node({ [ZONE]: 'zone-a' }));
      state.takeTopologyChanged();
      state.onNodeDelete(node({ [ZONE]: 'zone-a' }));
      expect(state.nodeLabels).toEqual({});
      expect(state.takeTopologyChanged()).toBe(true);
    });

    it('ignores other nodes with a warning', () => {
      const logger = recordingLogger();
      const { state, onChange } = setup(logger);
      state.onNodeAdd(node({ [ZONE]: 'zone-a' }, 'node-2'));
      expect(state.nodeLabels).toEqual({});
      expect(onChange.calls).toBe(0);
      expect(logger.warnings).toHaveLength(1);
    });
  });

  describe('malformed objects never throw out of a handler', () => {
    it.each([
      ['onServiceAdd', (s: ProxyState) => s.onServiceAdd(null as unknown as V1Service)],
      ['onServiceAdd without metadata', (s: ProxyState) => s.onServiceAdd({} as V1Service)],
      ['onServiceUpdate', (s: ProxyState) => s.onServiceUpdate({ spec: 5 } as unknown as V1Service, {} as V1Service)],
      ['onEndpointSliceAdd', (s: ProxyState) => s.onEndpointSliceAdd(null as unknown as V1EndpointSlice)],
      [
        'onEndpointSliceAdd with garbage',
        (s: ProxyState) =>
          s.onEndpointSliceAdd({
            addressType: 'IPv4',
            metadata: { namespace: 'ns', name: 'x', labels: { 'kubernetes.io/service-name': 's' } },
            endpoints: 'nope',
            ports: [null],
          } as unknown as V1EndpointSlice),
      ],
      ['onNodeAdd', (s: ProxyState) => s.onNodeAdd(null as unknown as V1Node)],
      ['onNodeUpdate', (s: ProxyState) => s.onNodeUpdate({} as V1Node, { metadata: { name: 'node-1', labels: 7 } } as unknown as V1Node)],
    ])('%s', (_name, call) => {
      const { state } = setup(recordingLogger());
      expect(() => call(state)).not.toThrow();
      expect(() => state.applyPendingChanges()).not.toThrow();
    });

    it('survives a throwing onChange callback', () => {
      const logger = recordingLogger();
      const state = new ProxyState({
        family: 'IPv4',
        nodeName: 'node-1',
        logger,
        onChange: () => {
          throw new Error('boom');
        },
      });
      expect(() => state.onServiceAdd(service)).not.toThrow();
      expect(logger.errors).toHaveLength(1);
      expect(state.pendingServiceChanges()).toBe(1);
    });
  });
});
