// What a service port asks of the localhost listeners comes from core's plan: the endpoints
// external traffic may use (policy, readiness, topology), and the Service's ClientIP affinity.
import type { Endpoint, ServicePlanContext } from '@kube-proxy/core';
import { planServicePort } from '@kube-proxy/core';
import { testServicePort } from '@kube-proxy/core/testing';
import { localhostNodePortOf } from './localhost-nodeport.js';

function ep(ip: string, options: Partial<Endpoint> = {}): Endpoint {
  return { ip, port: 8080, key: `${ip}:8080`, ready: true, serving: true, terminating: false, isLocal: false, nodeName: 'other', zone: '', zoneHints: null, nodeHints: null, ...options };
}

const ctx: ServicePlanContext = {
  nodeName: 'node-a',
  nodeLabels: { 'topology.kubernetes.io/zone': 'zone-a' },
  masqueradeAll: false,
  localDetection: true,
  nodeIP: '192.168.0.2',
};

describe('localhostNodePortOf', () => {
  const local = ep('10.0.1.1', { isLocal: true, nodeName: 'node-a', zone: 'zone-a', zoneHints: new Set(['zone-a']) });
  const remote = ep('10.0.2.1', { zone: 'zone-b', zoneHints: new Set(['zone-b']) });

  it('TCP NodePorts only (UDP/SCTP are rejected in nft; no NodePort: nothing)', () => {
    expect(localhostNodePortOf(planServicePort(testServicePort({ protocol: 'UDP', nodePort: 30053, externallyAccessible: true }), [local], ctx))).toBeNull();
    expect(localhostNodePortOf(planServicePort(testServicePort({ protocol: 'SCTP', nodePort: 30054, externallyAccessible: true }), [local], ctx))).toBeNull();
    expect(localhostNodePortOf(planServicePort(testServicePort({ nodePort: 0 }), [local], ctx))).toBeNull();
  });

  it('externalTrafficPolicy Cluster: every usable endpoint, sorted; Local: this node\'s only (none: empty, so no listener)', () => {
    // Without topology hints: the policy alone decides.
    const local = ep('10.0.1.1', { isLocal: true, nodeName: 'node-a' });
    const remote = ep('10.0.2.1');
    const cluster = testServicePort({ nodePort: 30080, externallyAccessible: true });
    expect(localhostNodePortOf(planServicePort(cluster, [remote, local], ctx))?.endpoints.map((e) => e.key)).toEqual(['10.0.1.1:8080', '10.0.2.1:8080']);
    const etpLocal = testServicePort({ nodePort: 30080, externallyAccessible: true, externalPolicyLocal: true, usesLocalEndpoints: true });
    expect(localhostNodePortOf(planServicePort(etpLocal, [remote, local], ctx))?.endpoints.map((e) => e.key)).toEqual(['10.0.1.1:8080']);
    expect(localhostNodePortOf(planServicePort(etpLocal, [remote], ctx))?.endpoints).toEqual([]);
    // Not ready: not used (serving-terminating only as core's fallback).
    expect(localhostNodePortOf(planServicePort(cluster, [ep('10.0.3.1', { ready: false, serving: false })], ctx))?.endpoints).toEqual([]);
  });

  it('trafficDistribution: the endpoints core keeps for this zone', () => {
    const preferClose = testServicePort({ nodePort: 30080, externallyAccessible: true, trafficDistribution: 'PreferClose' });
    expect(localhostNodePortOf(planServicePort(preferClose, [remote, local], ctx))?.endpoints.map((e) => e.key)).toEqual(['10.0.1.1:8080']);
  });

  it('ClientIP affinity: its timeout (0 without affinity)', () => {
    const sticky = testServicePort({ nodePort: 30080, externallyAccessible: true, sessionAffinityClientIP: true, stickyMaxAgeSeconds: 60 });
    expect(localhostNodePortOf(planServicePort(sticky, [local], ctx))?.affinitySeconds).toBe(60);
    expect(localhostNodePortOf(planServicePort(testServicePort({ nodePort: 30080, externallyAccessible: true }), [local], ctx))?.affinitySeconds).toBe(0);
  });
});
