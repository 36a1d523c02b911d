/**
 * Test support: a minimal stand-in for upstream's NewFakeProxier + syncProxyRules around
 * renderRuleset (jump rules, stale-chain policy, restore into FakeIPTables), so upstream's proxier
 * tests can be replayed step by step, synchronously. Full vs partial is decided by core's SyncPolicy,
 * the same object the one sync engine uses.
 */
import type { Endpoint, IPFamily, ServicePort } from '@kube-proxy/core';
import { joinHostPort, nullLogger, servicePortsFromService, SyncPolicy } from '@kube-proxy/core';
import type { AppliedChainMemo } from '../applied-chain-memo.js';
import { ChainNameCache } from '../chain-names.js';
import { JUMP_CHAINS, jumpRuleArgs, KUBELET_JUMP_CHAINS } from '../constants.js';
import type { RenderOptions, RenderResult } from '../render-ruleset.js';
import { isLargeClusterMode, renderRuleset } from '../render-ruleset.js';
import { FakeIPTables } from '@kube-proxy/netfilter-iptables/testing';
import { TEST_NODE_IP, TEST_NODE_NAME } from './packet-tracer.js';

/** The Service object shape servicePortsFromService takes (a v1.Service). */
export type TestService = Parameters<typeof servicePortsFromService>[0];

/** A v1.Service literal, filled in by `fn` (upstream's makeTestService). */
export function makeTestService(namespace: string, name: string, fn: (svc: TestService & { spec: NonNullable<TestService['spec']>; status: NonNullable<TestService['status']> }) => void): TestService {
  const svc = { metadata: { name, namespace, annotations: {} }, spec: {}, status: {} } as TestService & {
    spec: NonNullable<TestService['spec']>;
    status: NonNullable<TestService['status']>;
  };
  fn(svc);
  return svc;
}

export interface TestEndpoint {
  ip: string;
  nodeName?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

/** An Endpoint as core's tracker builds it from an EndpointSlice endpoint (nil conditions defaulted as upstream). */
export function makeEndpoint(ep: TestEndpoint, port: number, localNodeName = TEST_NODE_NAME): Endpoint {
  const ready = ep.ready ?? true;
  return {
    ip: ep.ip,
    port,
    key: joinHostPort(ep.ip, port),
    ready,
    serving: ep.serving ?? ready,
    terminating: ep.terminating ?? false,
    isLocal: ep.nodeName !== undefined && ep.nodeName === localNodeName,
    nodeName: ep.nodeName ?? '',
    zone: '',
    zoneHints: null,
    nodeHints: null,
  };
}

/** Upstream NewFakeProxier's settings, as RenderOptions. */
export function fakeProxierOptions(family: IPFamily = 'IPv4', overrides: Partial<RenderOptions> = {}): RenderOptions {
  return {
    family,
    nodeName: TEST_NODE_NAME,
    nodeIP: TEST_NODE_IP,
    masqueradeBit: 14,
    masqueradeMark: '0x4000',
    masqueradeAll: false,
    localhostNodePorts: true,
    randomFully: false,
    localDetector: { kind: 'cidr', cidr: family === 'IPv4' ? '10.0.0.0/8' : 'fd00:10::/64' },
    nodePortAddresses: { all: true },
    nodeLabels: {},
    conntrackTCPLiberal: false,
    nfacct: { ctStateInvalidDropped: true, localhostNodePortAccepted: true },
    ...overrides,
  };
}

export class FakeProxier {
  readonly ipt = new FakeIPTables();
  readonly names = new ChainNameCache();
  readonly serviceMap = new Map<string, ServicePort>();
  readonly endpointsMap = new Map<string, Endpoint[]>();
  options: RenderOptions;
  /** When a sync is a full one, decided as the real proxier's engine decides it. */
  readonly policy = new SyncPolicy();
  /** Fake clock (ms) and upstream's stale-chain cleanup bookkeeping. */
  now = 1_000_000;
  syncPeriodMs = 30_000;
  lastIPTablesCleanup = 0;
  /** The last payload handed to restore (upstream's fp.iptablesData). */
  iptablesData = '';
  lastResult: RenderResult | undefined;
  lastRestoreError: Error | undefined;
  /** Set to let partial syncs leave out unchanged top-level chains (committed/cleared as the proxier does). */
  appliedChains: AppliedChainMemo | null = null;
  private readonly portsByService = new Map<string, string[]>();
  private readonly changed = new Set<string>();

  constructor(family: IPFamily = 'IPv4', overrides: Partial<RenderOptions> = {}) {
    this.options = fakeProxierOptions(family, overrides);
  }

  /** OnServiceAdd / OnServiceUpdate. */
  addService(svc: TestService): void {
    const nsn = `${svc.metadata!.namespace}/${svc.metadata!.name}`;
    for (const key of this.portsByService.get(nsn) ?? []) this.serviceMap.delete(key);
    const ports = servicePortsFromService(svc, this.options.family, nullLogger);
    for (const p of ports) this.serviceMap.set(p.name.key, p);
    this.portsByService.set(nsn, ports.map((p) => p.name.key));
    this.changed.add(nsn);
  }

  deleteService(namespace: string, name: string): void {
    const nsn = `${namespace}/${name}`;
    for (const key of this.portsByService.get(nsn) ?? []) this.serviceMap.delete(key);
    this.portsByService.delete(nsn);
    this.changed.add(nsn);
  }

  /**
   * Sets the endpoints of one service port (an EndpointSlice's worth): sorted by `ip:port` and
   * de-duplicated as upstream's EndpointSliceCache does. `portName` "" = unnamed port.
   */
  setEndpoints(namespace: string, name: string, portName: string, port: number, endpoints: readonly TestEndpoint[]): void {
    const key = portName === '' ? `${namespace}/${name}` : `${namespace}/${name}:${portName}`;
    const byKey = new Map<string, Endpoint>();
    for (const ep of endpoints) {
      const e = makeEndpoint(ep, port, this.options.nodeName);
      if (!byKey.has(e.key)) byKey.set(e.key, e);
    }
    const list = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    if (list.length === 0) this.endpointsMap.delete(key);
    else this.endpointsMap.set(key, list);
    this.changed.add(`${namespace}/${name}`);
  }

  deleteEndpoints(namespace: string, name: string, portName: string): void {
    this.endpointsMap.delete(portName === '' ? `${namespace}/${name}` : `${namespace}/${name}:${portName}`);
    this.changed.add(`${namespace}/${name}`);
  }

  /** The services changed since the last sync (drained, as a sync drains them). */
  takeChangedServices(): Set<string> {
    const changed = new Set(this.changed);
    this.changed.clear();
    return changed;
  }

  /** Whether the next sync will be a full one (upstream's fp.needFullSync). */
  get needFullSync(): boolean {
    return this.policy.fullSyncPending;
  }

  forceSyncProxyRules(): RenderResult {
    this.policy.requestFullSync();
    return this.syncProxyRules();
  }

  /** One upstream syncProxyRules() pass; a restore failure is recorded (lastRestoreError), not thrown. */
  syncProxyRules(): RenderResult {
    const ticket = this.policy.begin(this.now);
    const doFullSync = ticket.full;
    if (doFullSync) {
      for (const jump of [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS]) {
        this.ipt.ensureChain(jump.table, jump.dstChain);
        this.ipt.ensureRule('prepend', jump.table, jump.srcChain, jumpRuleArgs(jump));
      }
    }
    const changed = new Set(this.changed);
    // The change trackers are drained whether or not the restore succeeds.
    this.changed.clear();

    const large = isLargeClusterMode(this.serviceMap, this.endpointsMap);
    const cleanup = !large || this.now - this.lastIPTablesCleanup > this.syncPeriodMs;
    const result = renderRuleset(
      {
        serviceMap: this.serviceMap,
        endpointsMap: this.endpointsMap,
        changedServices: doFullSync ? null : changed,
        existingNatChains: cleanup ? this.ipt.chains('nat') : null,
        appliedChains: this.appliedChains,
      },
      this.options,
      this.names,
    );
    if (result.staleChainCleanupRan) this.lastIPTablesCleanup = this.now;
    this.iptablesData = result.payload;
    this.lastResult = result;
    try {
      this.ipt.restoreAll(result.payload);
      this.lastRestoreError = undefined;
      this.policy.succeeded(ticket, this.now);
      if (result.appliedChainUpdate !== null) this.appliedChains?.commit(result.appliedChainUpdate);
    } catch (err) {
      this.lastRestoreError = err as Error;
      this.policy.failed();
      this.appliedChains?.clear();
    }
    return result;
  }
}
