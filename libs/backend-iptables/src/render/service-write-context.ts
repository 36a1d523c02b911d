/**
 * What the per-concern service writers (write-*.ts) share during one render: the payload sinks
 * they write into, the iptables text of the options, and the bookkeeping renderRuleset reports
 * (active chains, lines a partial sync counts without writing). One object per render, so the
 * per-service calls pass it instead of a dozen arguments.
 */
import type { LocalDetectorArgs } from '@kube-proxy/netfilter-iptables';
import type { NoEndpointsVerdict } from '@kube-proxy/core';
import type { ChainNameCache } from './chain-names.js';
import type { LineSink } from './line-buffer.js';

export interface ServiceWriteContext {
  /** filter KUBE-SERVICES: verdicts for cluster IPs without endpoints. */
  readonly fServices: LineSink;
  /** filter KUBE-EXTERNAL-SERVICES: verdicts for external addresses without endpoints. */
  readonly fExternal: LineSink;
  /** filter KUBE-NODEPORTS: health-check node ports. */
  readonly fNodePorts: LineSink;
  /** filter KUBE-PROXY-FIREWALL: drops of LB traffic the source ranges did not accept. */
  readonly fProxyFirewall: LineSink;
  /** nat KUBE-SERVICES: the captures of cluster, external and load-balancer IPs. */
  readonly nServices: LineSink;
  /** nat KUBE-NODEPORTS: the captures of node ports. */
  readonly nNodePorts: LineSink;
  /** nat chain lines and rules of the per-service chains (SVC, SVL, EXT, FW, SEP). */
  readonly natChains: LineSink;
  readonly natRules: LineSink;
  readonly detector: LocalDetectorArgs;
  readonly names: ChainNameCache;
  /** Upstream's large-cluster mode: endpoint rules carry no comments. */
  readonly largeClusterMode: boolean;
  /** Count localhost node-port traffic with nfacct (IPv4, localhost node ports on, counter present). */
  readonly localhostNodePortsNfacct: boolean;
  /** Every per-service chain that exists after this sync. */
  readonly activeNatChains: Set<string>;
  /** Chains and rules of unchanged services a partial sync keeps without writing (counted only). */
  skippedNatChains: number;
  skippedNatRules: number;
}

/** The iptables target of a no-endpoints verdict. */
export function verdictTarget(verdict: NoEndpointsVerdict | null): string {
  return verdict === 'drop' ? 'DROP' : 'REJECT';
}

/** The quoted comment upstream writes with a no-endpoints verdict; `n` is the comment-safe service port name. */
export function verdictComment(n: string, verdict: NoEndpointsVerdict | null): string {
  return verdict === 'drop' ? `"${n} has no local endpoints"` : `"${n} has no endpoints"`;
}
