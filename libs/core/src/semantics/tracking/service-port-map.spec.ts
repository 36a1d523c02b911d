import type { V1Service, V1ServicePort, V1ServiceSpec } from '@kubernetes/client-node';
import { nullLogger } from '../../host/logger.js';
import { ServiceChangeTracker } from './service-change-tracker.js';
import { MutableServicePortMap } from './service-port-map.js';

function makeService(namespace: string, name: string, spec: Partial<V1ServiceSpec>): V1Service {
  return {
    metadata: { namespace, name },
    spec: { type: 'ClusterIP', ...spec },
  };
}

function port(name: string, protocol: string, portNumber: number, nodePort = 0): V1ServicePort {
  return { name, protocol, port: portNumber, ...(nodePort ? { nodePort } : {}) };
}

function newTracker(family: 'IPv4' | 'IPv6' = 'IPv4'): ServiceChangeTracker {
  return new ServiceChangeTracker({ family, nodeName: 'node1', logger: nullLogger });
}

const clusterIPService = makeService('somewhere-else', 'cluster-ip', {
  clusterIP: '172.30.55.4',
  clusterIPs: ['172.30.55.4'],
  ports: [port('something', 'UDP', 1234), port('somethingelse', 'UDP', 1235), port('sctpport', 'SCTP', 1236)],
});
const nodePortService = makeService('somewhere-else', 'node-port', {
  type: 'NodePort',
  clusterIP: '172.30.55.10',
  ports: [port('blahblah', 'UDP', 345, 678), port('moreblahblah', 'TCP', 344, 677), port('sctpblah', 'SCTP', 343, 676)],
});
const loadBalancerService = makeService('somewhere', 'load-balancer', {
  type: 'LoadBalancer',
  clusterIP: '172.30.55.11',
  loadBalancerIP: '1.2.3.4',
  ports: [port('foobar', 'UDP', 8675, 30061), port('baz', 'UDP', 8676, 30062), port('sctpfoo', 'SCTP', 8677, 30063)],
});
const onlyLocalLoadBalancerService: V1Service = {
  ...makeService('somewhere', 'only-local-load-balancer', {
    type: 'LoadBalancer',
    clusterIP: '172.30.55.12',
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 345,
    ports: [port('foobar2', 'UDP', 8677, 30063), port('baz', 'UDP', 8678, 30064), port('sctpbaz', 'SCTP', 8679, 30065)],
  }),
  status: { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } },
};

describe('ServiceChangeTracker', () => {
  it('coalesces an add followed by a delete into nothing', () => {
    const tracker = newTracker();
    expect(tracker.update(null, clusterIPService)).toBe(true);
    expect(tracker.pendingCount()).toBe(1);
    expect(tracker.update(clusterIPService, null)).toBe(false);
    expect(tracker.pendingCount()).toBe(0);
  });

  it('coalesces several updates of one service into one change', () => {
    const tracker = newTracker();
    tracker.update(null, clusterIPService);
    const changed = makeService('somewhere-else', 'cluster-ip', { ...clusterIPService.spec, clusterIP: '172.30.55.5' });
    tracker.update(clusterIPService, changed);
    expect(tracker.pendingCount()).toBe(1);
    const changes = tracker.checkoutChanges();
    expect(changes.get('somewhere-else/cluster-ip')?.previous).toBeNull();
    expect(changes.get('somewhere-else/cluster-ip')?.current?.size).toBe(3);
    expect(tracker.pendingCount()).toBe(0);
  });

  it('reports no change for an update that changes nothing a proxier uses', () => {
    const tracker = newTracker();
    tracker.update(null, clusterIPService);
    tracker.checkoutChanges();
    const relabelled = { ...clusterIPService, metadata: { ...clusterIPService.metadata, labels: { a: 'b' } } };
    expect(tracker.update(clusterIPService, relabelled)).toBe(false);
  });

  it('reports true while other changes are pending, even if this one was a no-op', () => {
    const tracker = newTracker();
    tracker.update(null, clusterIPService);
    expect(tracker.update(nodePortService, nodePortService)).toBe(true);
    expect(tracker.pendingNames()).toEqual(['somewhere-else/cluster-ip']);
  });

  it.each([
    ['headless', { clusterIP: 'None', ports: [port('rpc', 'UDP', 1234)] }],
    ['headless without ports', { clusterIP: 'None' }],
    ['ExternalName', { type: 'ExternalName', clusterIP: '172.30.55.4', externalName: 'foo2.bar.com' }],
  ])('ignores %s services', (_name, spec) => {
    const tracker = newTracker();
    expect(tracker.update(null, makeService('ns', 'svc', spec))).toBe(false);
    expect(tracker.pendingCount()).toBe(0);
  });

  it('ignores a service of the other family', () => {
    expect(newTracker('IPv6').update(null, clusterIPService)).toBe(false);
  });
});

describe('MutableServicePortMap', () => {
  function build(services: V1Service[]) {
    const tracker = newTracker();
    const map = new MutableServicePortMap();
    for (const svc of services) tracker.update(null, svc);
    return { tracker, map, result: map.update(tracker) };
  }

  it('adds and removes services (upstream TestBuildServiceMapAddRemove)', () => {
    const services = [clusterIPService, nodePortService, loadBalancerService, onlyLocalLoadBalancerService];
    const { tracker, map, result } = build(services);
    expect(map.size).toBe(12);
    expect(result.updatedServices).toEqual(
      new Set([
        'somewhere-else/cluster-ip',
        'somewhere-else/node-port',
        'somewhere/load-balancer',
        'somewhere/only-local-load-balancer',
      ]),
    );
    expect(result.deletedUDPClusterIPs.size).toBe(0);
    expect(map.healthCheckNodePorts()).toEqual(new Map([['somewhere/only-local-load-balancer', 345]]));
    expect(map.get('somewhere-else/node-port:blahblah')).toMatchObject({ nodePort: 678, protocol: 'UDP' });

    // Remove some of the services; their UDP cluster IPs need conntrack cleanup.
    tracker.update(clusterIPService, null);
    tracker.update(loadBalancerService, null);
    tracker.update(onlyLocalLoadBalancerService, null);
    const removal = map.update(tracker);
    expect(map.size).toBe(3);
    expect([...map.keys()].every((k) => k.startsWith('somewhere-else/node-port'))).toBe(true);
    expect(removal.deletedUDPClusterIPs).toEqual(new Set(['172.30.55.4', '172.30.55.11', '172.30.55.12']));
    expect(map.healthCheckNodePorts().size).toBe(0);
  });

  it('updates a service in place across types (upstream TestBuildServiceMapServiceUpdate)', () => {
    const servicev1 = makeService('some-namespace', 'some-service', {
      clusterIP: '172.30.55.4',
      ports: [port('something', 'UDP', 1234), port('somethingelse', 'TCP', 1235)],
    });
    const servicev2: V1Service = {
      ...makeService('some-namespace', 'some-service', {
        type: 'LoadBalancer',
        clusterIP: '172.30.55.4',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 345,
        ports: [port('something', 'UDP', 1234, 7002), port('somethingelse', 'TCP', 1235, 7003)],
      }),
      status: { loadBalancer: { ingress: [{ ip: '10.1.2.3' }] } },
    };
    const { tracker, map } = build([servicev1]);
    expect(map.healthCheckNodePorts().size).toBe(0);

    tracker.update(servicev1, servicev2);
    let result = map.update(tracker);
    expect(map.size).toBe(2);
    expect(map.healthCheckNodePorts()).toEqual(new Map([['some-namespace/some-service', 345]]));
    // Ports updated in place are not deletions.
    expect(result.deletedUDPClusterIPs.size).toBe(0);

    // A no-op update leaves nothing pending.
    expect(tracker.update(servicev2, servicev2)).toBe(false);
    result = map.update(tracker);
    expect(result.updatedServices.size).toBe(0);

    tracker.update(servicev2, servicev1);
    result = map.update(tracker);
    expect(map.size).toBe(2);
    expect(map.healthCheckNodePorts().size).toBe(0);
    expect(result.updatedServices).toEqual(new Set(['some-namespace/some-service']));
  });

  it('reports the cluster IP when a UDP port changes protocol', () => {
    const udp = makeService('ns', 'dns', { clusterIP: '172.30.0.10', ports: [port('dns', 'UDP', 53)] });
    const tcp = makeService('ns', 'dns', { clusterIP: '172.30.0.10', ports: [port('dns', 'TCP', 53)] });
    const { tracker, map } = build([udp]);
    tracker.update(udp, tcp);
    const result = map.update(tracker);
    expect(map.get('ns/dns:dns')?.protocol).toBe('TCP');
    expect(result.deletedUDPClusterIPs).toEqual(new Set(['172.30.0.10']));

    tracker.update(tcp, udp);
    expect(map.update(tracker).deletedUDPClusterIPs.size).toBe(0);
  });

  it('removes a port that disappeared from a service and keeps the rest', () => {
    const before = makeService('ns', 's', {
      clusterIP: '172.30.0.1',
      ports: [port('a', 'UDP', 1), port('b', 'TCP', 2)],
    });
    const after = makeService('ns', 's', { clusterIP: '172.30.0.1', ports: [port('b', 'TCP', 2)] });
    const { tracker, map } = build([before]);
    tracker.update(before, after);
    const result = map.update(tracker);
    expect([...map.keys()]).toEqual(['ns/s:b']);
    expect(result.deletedUDPClusterIPs).toEqual(new Set(['172.30.0.1']));
  });

  it('is read-only to callers', () => {
    const { map } = build([clusterIPService]);
    expect((map as unknown as { set?: unknown }).set).toBeUndefined();
    const seen: string[] = [];
    map.forEach((_v, k) => seen.push(k));
    expect(seen).toEqual([...map.keys()]);
    expect([...map].length).toBe(3);
  });
});
