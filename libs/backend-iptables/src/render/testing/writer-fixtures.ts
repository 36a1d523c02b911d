/**
 * Test support for the per-concern writers (write-*.ts): a ServiceWriteContext over plain
 * LineBuffers and a ServicePortPlan literal, so each writer is tested on a plan alone, the way a
 * backend consumes core's plans (no Service objects, no Kubernetes rules in the test).
 */
import type { Endpoint, ServicePort, ServicePortPlan } from '@kube-proxy/core';
import { localDetectorArgs } from '@kube-proxy/netfilter-iptables';
import { servicePortName } from '@kube-proxy/core';
import { testServicePort } from '@kube-proxy/core/testing';
import { ChainNameCache, type ServiceChainNames } from '../chain-names.js';
import { LineBuffer } from '../line-buffer.js';
import type { ServiceWriteContext } from '../service-write-context.js';

export interface WriterFixture {
  readonly w: ServiceWriteContext;
  readonly chains: ServiceChainNames;
  /** Every sink's text by its field name in ServiceWriteContext. */
  text(): Record<string, string>;
}

const SINKS = ['fServices', 'fExternal', 'fNodePorts', 'fProxyFirewall', 'nServices', 'nNodePorts', 'natChains', 'natRules'] as const;

export function writerFixture(o: { largeClusterMode?: boolean; localhostNodePortsNfacct?: boolean } = {}): WriterFixture {
  const names = new ChainNameCache();
  names.beginSync();
  const buffers = Object.fromEntries(SINKS.map((s) => [s, new LineBuffer()])) as Record<(typeof SINKS)[number], LineBuffer>;
  const w: ServiceWriteContext = {
    ...buffers,
    detector: localDetectorArgs({ kind: 'cidr', cidr: '10.0.0.0/8' }),
    names,
    largeClusterMode: o.largeClusterMode ?? false,
    localhostNodePortsNfacct: o.localhostNodePortsNfacct ?? false,
    activeNatChains: new Set<string>(),
    skippedNatChains: 0,
    skippedNatRules: 0,
  };
  const chains = names.service(PORT.name.key, PORT.protocol);
  return {
    w,
    chains,
    text: () => Object.fromEntries(SINKS.filter((s) => buffers[s].lines > 0).map((s) => [s, buffers[s].toString()])),
  };
}

const PORT: ServicePort = testServicePort({ name: servicePortName('ns1', 'svc1', 'p80', 'TCP') });

export function endpoint(ip: string): Endpoint {
  return { ip, port: 8080, key: `${ip}:8080`, ready: true, serving: true, terminating: false, isLocal: false, nodeName: 'node-2', zone: '', zoneHints: null, nodeHints: null };
}

/** A plan of a reachable ClusterIP port with one endpoint; `o` overrides any field. */
export function plan(o: Partial<ServicePortPlan> = {}): ServicePortPlan {
  const ep = endpoint('10.180.0.1');
  return {
    service: PORT,
    hasEndpoints: true,
    clusterEndpoints: [ep],
    localEndpoints: [],
    reachableEndpoints: [ep],
    balancesClusterEndpoints: true,
    balancesLocalEndpoints: false,
    sessionAffinity: false,
    affinitySeconds: 0,
    clusterIP: '172.30.0.41',
    internalEndpoints: 'cluster',
    internalReachable: true,
    internalVerdict: null,
    internalMasquerade: 'off-cluster',
    externalIPs: [],
    loadBalancerIPs: [],
    nodePort: 0,
    externalAccepted: true,
    externalEndpoints: 'cluster',
    externalReachable: true,
    externalVerdict: null,
    externalMasquerade: 'none',
    podsBypassExternalPolicy: false,
    firewalled: false,
    firewallSourceRanges: [],
    firewallAllowsLoadBalancerIPs: false,
    masqueradeHairpin: true,
    healthCheckNodePort: 0,
    ...o,
  };
}
