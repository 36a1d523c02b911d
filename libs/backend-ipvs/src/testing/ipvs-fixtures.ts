/**
 * Test support for the desired-state specs: Services as v1 objects turned into core ServicePorts by
 * core's own servicePortsFromService (so the tests see what the informer path produces), endpoints
 * as core's tracker builds them, and upstream ipvs proxier_test.go's node settings.
 */
import type { Endpoint, IPFamily, ServicePort } from '@kube-proxy/core';
import { joinHostPort, nullLogger, servicePortsFromService } from '@kube-proxy/core';
import { buildDesiredIpvsState, type IpvsStateOptions } from '../state/build-desired-state.js';
import type { DesiredIpvsState } from '../state/ipvs-state.js';

export type TestService = Parameters<typeof servicePortsFromService>[0];
type FilledService = TestService & { spec: NonNullable<TestService['spec']>; status: NonNullable<TestService['status']> };

/** Upstream's testHostname and a node IP of each family (proxier_test.go uses 100.101.102.103). */
export const NODE_NAME = 'test-hostname';
export const NODE_IPV4 = '100.101.102.103';
export const NODE_IPV6 = '2001:db8::1:1';

export function makeService(namespace: string, name: string, fn: (svc: FilledService) => void): TestService {
  const svc = { metadata: { name, namespace, annotations: {} }, spec: {}, status: {} } as FilledService;
  fn(svc);
  return svc;
}

export interface TestEndpoint {
  ip: string;
  port: number;
  nodeName?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export function makeEndpoint(ep: TestEndpoint): Endpoint {
  const ready = ep.ready ?? true;
  return {
    ip: ep.ip,
    port: ep.port,
    key: joinHostPort(ep.ip, ep.port),
    ready,
    serving: ep.serving ?? ready,
    terminating: ep.terminating ?? false,
    isLocal: ep.nodeName === NODE_NAME,
    nodeName: ep.nodeName ?? '',
    zone: '',
    zoneHints: null,
    nodeHints: null,
  };
}

/** A service map / endpoints map pair built up service by service. */
export class TestCluster {
  readonly serviceMap = new Map<string, ServicePort>();
  readonly endpointsMap = new Map<string, Endpoint[]>();

  constructor(readonly family: IPFamily = 'IPv4') {}

  /** Adds every port of `svc` for this family; returns the ports added. */
  service(svc: TestService, family: IPFamily = this.family): ServicePort[] {
    const ports = servicePortsFromService(svc, family, nullLogger);
    for (const p of ports) this.serviceMap.set(p.name.key, p);
    return ports;
  }

  /** Sets the endpoints of one service port key (`ns/name:port` or `ns/name`), sorted by ip:port. */
  endpoints(key: string, endpoints: readonly TestEndpoint[]): void {
    const list = endpoints.map(makeEndpoint).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.endpointsMap.set(key, list);
  }

  state(overrides: Partial<IpvsStateOptions> = {}): DesiredIpvsState {
    return buildDesiredIpvsState(this.serviceMap, this.endpointsMap, defaultOptions(this.family, overrides));
  }
}

export function defaultOptions(family: IPFamily, overrides: Partial<IpvsStateOptions> = {}): IpvsStateOptions {
  return {
    family,
    nodeName: NODE_NAME,
    nodeLabels: {},
    nodeIP: family === 'IPv4' ? NODE_IPV4 : NODE_IPV6,
    nodePortAddresses: { all: true },
    localAddresses: [NODE_IPV4, NODE_IPV6, '127.0.0.1', '::1'],
    ...overrides,
  };
}

/** The entries of one set by its kernel name (throws if the set is not in the state). */
export function setEntries(state: DesiredIpvsState, name: string): readonly string[] {
  const s = state.ipsets.find((x) => x.set.name === name);
  if (s === undefined) throw new Error(`no set ${name}`);
  return s.entries;
}

/** Non-empty sets only, name → entries (compact expectations). */
export function nonEmptySets(state: DesiredIpvsState): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const s of state.ipsets) if (s.entries.length > 0) out[s.set.name] = s.entries;
  return out;
}

/** Virtual servers as `key scheduler flags timeout -> rs,rs` lines (compact expectations). */
export function serverSummary(state: DesiredIpvsState): string[] {
  return state.virtualServers.map((vs) => {
    const extra = [vs.scheduler, ...vs.flags, ...(vs.persistenceTimeout > 0 ? [`p${vs.persistenceTimeout}`] : [])].join(' ');
    return `${vs.key} ${extra} -> ${vs.realServers.map((r) => r.key).join(',')}`;
  });
}
