import type { ProxyContext } from '@kube-proxy/core';
import type { StringSink, TestContextOverrides } from '@kube-proxy/core/testing';
import { TEST_HOST, testContext } from '@kube-proxy/core/testing';
import { DryRunIptables } from '@kube-proxy/netfilter-iptables';
import { IptablesRestoreError, type RestoreOptions, type RulePosition, type Table } from '@kube-proxy/netfilter-iptables';
import type { V1EndpointSlice, V1Node, V1Service } from '../k8s-types.js';

/* Test fixtures for the proxier specs (not part of the package API). */

export const NODE = 'node-1';

export const HOST = TEST_HOST;

export function context(overrides: TestContextOverrides = {}): ProxyContext & { dryRunSink: StringSink } {
  const { config, ...rest } = overrides;
  return testContext({
    nodeIPs: { IPv4: '192.168.50.1', IPv6: 'fd00:50::1' },
    dryRun: true,
    ...rest,
    config: { clusterCIDR: '10.244.0.0/16', ...(config ?? {}) },
  });
}

/** DryRunIptables that records what the proxier does and can be told to fail. */
export class TestIptables extends DryRunIptables {
  readonly payloads: string[] = [];
  saves = 0;
  /** Fail the next restore(s), blaming this payload line. */
  failRestores: { count: number; line: number } | undefined;
  failEnsureRules = 0;
  /** Refuse every restore with a line this matches, blaming that line as iptables-restore does. */
  refuseLine: ((line: string) => boolean) | undefined;

  override async restore(payload: string, options: RestoreOptions): Promise<void> {
    this.payloads.push(payload);
    if (this.failRestores && this.failRestores.count > 0) {
      this.failRestores.count--;
      const line = this.failRestores.line;
      throw new IptablesRestoreError(`iptables-restore: line ${line} failed`, 1, `iptables-restore: line ${line} failed`, line);
    }
    const refused = this.refuseLine ? payload.split('\n').findIndex(this.refuseLine) + 1 : 0;
    if (refused > 0) throw new IptablesRestoreError(`iptables-restore: line ${refused} failed`, 2, `Error occurred at line: ${refused}`, refused);
    return super.restore(payload, options);
  }

  /** Chunked restores go through restore(), so every payload is recorded (and overridable) as text. */
  override async restoreChunks(chunks: readonly Uint8Array[], options: RestoreOptions): Promise<void> {
    return this.restore(Buffer.concat(chunks).toString('latin1'), options);
  }

  override async saveTable(table: Table): Promise<string> {
    this.saves++;
    return super.saveTable(table);
  }

  override async ensureRule(position: RulePosition, table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    if (this.failEnsureRules > 0) {
      this.failEnsureRules--;
      throw new Error('iptables: Resource temporarily unavailable.');
    }
    return super.ensureRule(position, table, chain, args);
  }

  get lastPayload(): string {
    return this.payloads[this.payloads.length - 1] ?? '';
  }
}

export interface PortSpec {
  readonly name: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
  readonly targetPort: number;
  readonly nodePort?: number;
}

export function service(ns: string, name: string, clusterIP: string, ports: readonly PortSpec[], type = 'ClusterIP'): V1Service {
  const v6 = clusterIP.includes(':');
  return {
    metadata: { namespace: ns, name },
    spec: {
      type,
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: [v6 ? 'IPv6' : 'IPv4'],
      ports: ports.map((p) => ({
        name: p.name,
        port: p.port,
        protocol: p.protocol,
        targetPort: p.targetPort as never,
        ...(p.nodePort ? { nodePort: p.nodePort } : {}),
      })),
    },
  };
}

export function slice(
  ns: string,
  svcName: string,
  sliceName: string,
  ports: readonly PortSpec[],
  ips: readonly string[],
): V1EndpointSlice {
  const v6 = ips.some((ip) => ip.includes(':'));
  return {
    metadata: { namespace: ns, name: sliceName, labels: { 'kubernetes.io/service-name': svcName } },
    addressType: v6 ? 'IPv6' : 'IPv4',
    ports: ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol })),
    endpoints: ips.map((ip) => ({ addresses: [ip], nodeName: NODE, conditions: { ready: true } })),
  };
}

export function node(labels: Record<string, string>, podCIDRs: string[] = []): V1Node {
  return { metadata: { name: NODE, labels }, spec: { podCIDRs } };
}

/** Core's settle, re-exported for the specs that already import it from here. */
export { settle } from '@kube-proxy/core/testing';
