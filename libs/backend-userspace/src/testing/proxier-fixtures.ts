/* Fixtures for the userspace proxier and plugin specs (not part of the package API). */
import type { IPFamily, ProxyContext, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import type { IptablesInterface, RestoreOptions, RulePosition, RuleSpec, Table } from '@kube-proxy/netfilter-iptables';
import type { StringSink, TestContextOverrides } from '@kube-proxy/core/testing';
import { defaultConfiguration } from '@kube-proxy/core';
import { IptablesRestoreError, joinArgs } from '@kube-proxy/netfilter-iptables';
import { testContext } from '@kube-proxy/core/testing';

export const NODE = 'node-1';

/** A run on TEST_HOST whose proxy sockets listen on 127.0.0.1, syncing without a minimum interval. */
export function context(overrides: TestContextOverrides = {}): ProxyContext & { dryRunSink: StringSink } {
  const { config, ...rest } = overrides;
  const base = defaultConfiguration();
  return testContext({
    ...rest,
    config: { bindAddress: '127.0.0.1', iptables: { ...base.iptables, minSyncPeriod: '0s', syncPeriod: '1s' }, ...(config ?? {}) },
  });
}

/**
 * An IptablesInterface that records restores and jump rules, and can be told to fail restores. It
 * remembers what the last successful restore put in each table (its `-A` lines) and the ensured
 * rules, so flush detection (missingRules) can be tested with flush().
 */
export class RecordingIptables implements IptablesInterface {
  readonly family: IPFamily = 'IPv4';
  readonly description = 'recording';
  readonly payloads: string[] = [];
  readonly rules: string[] = [];
  failRestores = 0;
  /** missingRules calls (one per table and flush-monitor round). */
  checks = 0;
  private readonly restored = new Map<string, Set<string>>();

  async restore(payload: string, options: RestoreOptions): Promise<void> {
    this.payloads.push(payload);
    if (!options.noFlush) throw new Error('the userspace proxier must restore with --noflush');
    if (this.failRestores > 0) {
      this.failRestores--;
      throw new IptablesRestoreError('iptables-restore: line 7 failed', 1, 'iptables-restore: line 7 failed', 7);
    }
    // Every capture chain of a table is declared in the payload, so its lines replace the table's.
    let table = '';
    for (const line of payload.split('\n')) {
      if (line.startsWith('*')) this.restored.set((table = line.slice(1)), new Set());
      else if (line.startsWith('-A ')) this.restored.get(table)?.add(line);
    }
  }

  async missingRules(table: Table, rules: readonly RuleSpec[]): Promise<RuleSpec[]> {
    this.checks++;
    return rules.filter((r) => {
      const ensured = `${table} ${r.chain} ${r.args.join(' ')}`;
      if (this.rules.some((rule) => rule.slice(3) === ensured)) return false;
      return !(this.restored.get(table)?.has(`-A ${r.chain} ${joinArgs(r.args)}`) ?? false);
    });
  }

  /** `iptables -t TABLE -F [CHAIN]`: the table's (or the chain's) rules are gone, its chains stay. */
  flush(table: Table, chain?: string): void {
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const [, t, c] = (this.rules[i] as string).split(' ');
      if (t === table && (chain === undefined || c === chain)) this.rules.splice(i, 1);
    }
    const lines = this.restored.get(table);
    for (const line of [...(lines ?? [])]) if (chain === undefined || line.startsWith(`-A ${chain} `)) lines?.delete(line);
  }
  async saveTable(): Promise<string> {
    return '';
  }
  async ensureChain(): Promise<boolean> {
    return true;
  }
  async ensureRule(position: RulePosition, table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    const rule = `${position} ${table} ${chain} ${args.join(' ')}`;
    const existed = this.rules.includes(rule);
    if (!existed) this.rules.push(rule);
    return existed;
  }
  // The proxier never removes rules or chains (only --cleanup does, through core's helper).
  deleteRule(): Promise<void> {
    return Promise.reject(new Error('unexpected deleteRule'));
  }
  flushChain(): Promise<void> {
    return Promise.reject(new Error('unexpected flushChain'));
  }
  deleteChain(): Promise<void> {
    return Promise.reject(new Error('unexpected deleteChain'));
  }
  async chainExists(): Promise<boolean> {
    return true;
  }

  get lastPayload(): string {
    return this.payloads[this.payloads.length - 1] ?? '';
  }
}

export interface PortSpec {
  readonly name: string;
  readonly port: number;
  readonly protocol?: 'TCP' | 'UDP' | 'SCTP';
  readonly nodePort?: number;
}

export function service(
  name: string,
  clusterIP: string,
  ports: readonly PortSpec[],
  extra: { type?: string; externalIPs?: string[]; affinitySeconds?: number; externalTrafficPolicy?: string } = {},
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', resourceVersion: '1' },
    spec: {
      type: extra.type ?? 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP', ...(p.nodePort ? { nodePort: p.nodePort } : {}) })),
      ...(extra.externalIPs ? { externalIPs: extra.externalIPs } : {}),
      ...(extra.externalTrafficPolicy ? { externalTrafficPolicy: extra.externalTrafficPolicy } : {}),
      ...(extra.affinitySeconds
        ? { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: extra.affinitySeconds } } }
        : {}),
    },
  } as V1Service;
}

export interface EndpointSpec {
  readonly ip: string;
  readonly node?: string;
  readonly ready?: boolean;
}

/** One slice (`<svc>-<suffix>`) for `svc` with one port named `portName` (`port` on every endpoint). */
export function slice(
  svc: string,
  suffix: string,
  portName: string,
  port: number,
  endpoints: readonly EndpointSpec[],
  protocol: 'TCP' | 'UDP' = 'TCP',
): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-${suffix}`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc }, resourceVersion: '1' },
    addressType: 'IPv4',
    ports: [{ name: portName, port, protocol }],
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true }, nodeName: e.node ?? NODE })),
  } as V1EndpointSlice;
}
