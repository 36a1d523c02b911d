import type { Endpoint, ServicePort } from '@kube-proxy/core';
import { servicePortName } from '@kube-proxy/core';
import { testServicePort } from '@kube-proxy/core/testing';
import { desiredPorts } from './desired-ports.js';

// The userspace proxy passes --feature-gates=PreferSameTrafficDistribution to core's topology: with the
// gate off, node hints are ignored and zone hints decide which endpoints a proxy socket uses.

const NODE = 'node-1';

function ep(ip: string, zone: string, forNode: string): Endpoint {
  return {
    ip,
    port: 8080,
    key: `${ip}:8080`,
    ready: true,
    serving: true,
    terminating: false,
    isLocal: forNode === NODE,
    nodeName: forNode,
    zone,
    zoneHints: new Set([zone]),
    nodeHints: new Set([forNode]),
  };
}

const SVC: ServicePort = testServicePort({
  name: servicePortName('ns', 'web', 'http', 'TCP'),
  clusterIP: '10.96.0.10',
  trafficDistribution: 'PreferSameNode',
});

function internalTargets(preferSame?: boolean): string[] {
  const key = 'ns/web:http';
  const endpoints = [ep('10.244.1.11', 'zone-a', NODE), ep('10.244.1.12', 'zone-a', 'node-2'), ep('10.244.1.13', 'zone-b', 'node-3')];
  const ports = desiredPorts(
    new Map([[key, SVC]]),
    new Map([[key, endpoints]]),
    NODE,
    { 'topology.kubernetes.io/zone': 'zone-a' },
    () => undefined,
    preferSame === undefined ? undefined : { preferSameTrafficDistribution: preferSame },
  );
  return ports[0]!.internal.map((t) => t.key);
}

describe('desiredPorts and the PreferSameTrafficDistribution gate', () => {
  it('uses the endpoint hinted for this node while the gate is on (its default)', () => {
    expect(internalTargets()).toEqual(['10.244.1.11:8080']);
    expect(internalTargets(true)).toEqual(['10.244.1.11:8080']);
  });

  it('ignores node hints and uses the zone hints when the gate is off', () => {
    expect(internalTargets(false)).toEqual(['10.244.1.11:8080', '10.244.1.12:8080']);
  });
});
