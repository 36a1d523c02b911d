/**
 * What the IPVS proxier needs from the kernel, as one narrow interface: read back the state it owns
 * and apply one batch per tool. The real implementation (host-ipvs-kernel.ts) runs ipvsadm, ipset
 * and ip through core's CommandExecutor with argument arrays and stdin only, one process per call;
 * --dry-run and the tests use the in-memory MemoryIpvsKernel (memory-ipvs-kernel.ts), which applies
 * the same batch text, so the proxier's specs exercise the exact text the tools would get.
 */
import type { IPFamily } from '@kube-proxy/core';
import type { VirtualServer } from '../state/ipvs-state.js';

/** Upstream's DefaultDummyDevice: the link holding every service VIP, left DOWN. */
export const KUBE_IPVS_DEVICE = 'kube-ipvs0';

/** Connection counts of one real server, as /proc/net/ip_vs lists them. */
export interface RealServerConnections {
  readonly active: number;
  readonly inactive: number;
}

/** Virtual server key (`10.96.0.1:80/TCP`, VirtualServer.key) → real server key (`10.244.1.5:8080`) → counts. */
export type IpvsConnections = ReadonlyMap<string, ReadonlyMap<string, RealServerConnections>>;

export interface IpvsKernel {
  /** `ipvsadm --save -n`, parsed; only the virtual servers of `family`, sorted by key (real servers too). */
  readVirtualServers(family: IPFamily): Promise<VirtualServer[]>;
  /** `ipvsadm --restore` with `batch` on stdin (a no-op for ""). Throws with ipvsadm's message on failure. */
  applyIpvsadm(batch: string): Promise<void>;
  /** `ipset save`, parsed: set name → its entries (as `ipset save` prints them), for every set on the host. */
  readIpsets(): Promise<Map<string, string[]>>;
  /** `ipset restore` with `script` on stdin (a no-op for ""). Throws on failure. */
  applyIpset(script: string): Promise<void>;
  /**
   * The addresses of `family` bound on kube-ipvs0 (plain addresses, no prefix length), or null when
   * the link does not exist.
   */
  readBoundAddresses(family: IPFamily): Promise<string[] | null>;
  /**
   * One `ip -batch -` run: creates kube-ipvs0 (type dummy, left DOWN) when `createLink`, then binds
   * `add` and unbinds `remove` (plain addresses; /32 or /128 is added). A no-op when there is nothing to do.
   */
  applyLinkChanges(change: { readonly createLink: boolean; readonly add: readonly string[]; readonly remove: readonly string[] }): Promise<void>;
  /** Connection counts from /proc/net/ip_vs (both families); an empty map when IPVS is absent. */
  readConnections(): Promise<IpvsConnections>;
}
