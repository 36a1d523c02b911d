/**
 * The desired IPVS state of one IP family as plain data: what upstream's IPVS proxier
 * (pkg/proxy/ipvs/proxier.go, syncProxyRules / syncService / syncEndpoint) would program, computed
 * without touching the kernel so it can be rendered, diffed and tested on its own. The proxier
 * (a later step) applies it with ipvsadm / ipset batches and binds the addresses on kube-ipvs0.
 *
 * Every list is sorted (virtual servers by key, real servers by key, addresses and set entries as
 * plain strings) so two states built from the same input are equal value for value and text for text.
 */
import type { IPFamily, Protocol } from '@kube-proxy/core';
import type { IpsetDefinition } from './ipset-catalogue.js';

/** One real server (upstream utilipvs.RealServer): always weight 1 and masquerading (NAT) forwarding. */
export interface RealServer {
  readonly address: string;
  readonly port: number;
  readonly weight: number;
  /** `address:port` (IPv6 in brackets), unique within a virtual server. */
  readonly key: string;
  /**
   * Only on servers read back from the kernel that someone else made: direct routing (`-g`) or
   * tunnelling (`-i`). Absent means masquerading (`-m`), the only method we write.
   */
  readonly forwarding?: 'route' | 'tunnel';
  /** Only on servers read back from the kernel: `ipvsadm --save -n` options we never write (`--tun-type gue`, …), as printed. */
  readonly otherOptions?: readonly string[];
}

/**
 * Scheduler flags as ipvsadm names them for the mh scheduler: upstream sets FlagSourceHash
 * (IP_VS_SVC_F_SCHED2, printed `mh-port`) whenever --ipvs-scheduler is mh.
 */
export type SchedulerFlag = 'mh-port';

/**
 * Every `-b` flag name `ipvsadm --save -n` can print (flag-1..3 for schedulers without names for
 * them); a virtual server read back from the kernel may carry any of these, ours only 'mh-port'.
 */
export type IpvsadmSchedulerFlag = SchedulerFlag | 'mh-fallback' | 'sh-fallback' | 'sh-port' | 'flag-1' | 'flag-2' | 'flag-3';

/** One virtual server (upstream utilipvs.VirtualServer) with the real servers behind it. */
export interface VirtualServer {
  readonly protocol: Protocol;
  readonly address: string;
  readonly port: number;
  /** --ipvs-scheduler (default rr). */
  readonly scheduler: string;
  readonly flags: readonly IpvsadmSchedulerFlag[];
  /** Persistence timeout in seconds from ClientIP session affinity; 0 = not persistent. */
  readonly persistenceTimeout: number;
  readonly realServers: readonly RealServer[];
  /** Upstream's VirtualServer.String(): `address:port/PROTOCOL` (IPv6 in brackets). */
  readonly key: string;
  /** Only on virtual servers read back from the kernel: `--save -n` options we never write (`-M 64`, `--pe sip`, `-o`), as printed. */
  readonly otherOptions?: readonly string[];
}

/** The entries one ipset should hold. */
export interface IpsetState {
  readonly set: IpsetDefinition;
  /** Entries in `ipset save` notation, sorted. */
  readonly entries: readonly string[];
}

export interface DesiredIpvsState {
  readonly family: IPFamily;
  readonly virtualServers: readonly VirtualServer[];
  /** Addresses to bind on kube-ipvs0: cluster IPs, external IPs, load-balancer IPs (never node IPs). */
  readonly bindAddresses: readonly string[];
  /** Every set of the family's catalogue, in catalogue order, empty sets included. */
  readonly ipsets: readonly IpsetState[];
  /**
   * Service ports whose Local policy finds no local endpoint, per traffic class (upstream's
   * sync_proxy_rules_no_local_endpoints_total); absent on states read back from the kernel.
   */
  readonly noLocalEndpoints?: { readonly internal: number; readonly external: number };
  /**
   * `<what> <address>: <why>` of the addresses left out of one place because the kernel refuses them
   * there (kernel-refused-addresses.ts); absent on states read back from the kernel.
   */
  readonly skippedAddresses?: readonly string[];
}
