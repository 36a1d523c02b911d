/**
 * The mutable accumulation of one buildDesiredIpvsState run, frozen into a DesiredIpvsState at the
 * end: virtual servers by key (the first claim wins), kube-ipvs0 binds, set entries by role, and the
 * addresses left out because the kernel refuses them where they would go (kernel-refused-addresses.ts).
 */
import { canonicalIP, joinHostPort, type Endpoint, type IPFamily, type Protocol } from '@kube-proxy/core';
import { ipsetCatalogue, type IpsetRole } from './ipset-catalogue.js';
import type { DesiredIpvsState, RealServer, SchedulerFlag, VirtualServer } from './ipvs-state.js';
import { refusedRealServerReason, unbindableReason } from './kernel-refused-addresses.js';
import { assertStateIP, assertStatePort } from './state-guards.js';

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Where one service port's parts go (build-desired-state.ts' addServicePort writes them): the whole
 * state's StateBuilder for a full build, or one service port's FragmentBuilder (port-fragment.ts)
 * for the incremental index, so both read the Service the same way, from one piece of code.
 */
export interface ServicePortSink {
  readonly family: IPFamily;
  readonly noLocal: { internal: number; external: number };
  skip(what: string, address: string, why: string): void;
  /** Binds a service address on kube-ipvs0, unless the kernel refuses it there. */
  bindVip(ip: string): void;
  /** Binds an external or load-balancer IP on kube-ipvs0 unless the node already has it. */
  bindUnlessLocal(ip: string): void;
  entry(role: IpsetRole, entry: string): void;
  virtualServer(protocol: Protocol, address: string, port: number, persistenceTimeout: number, endpoints: readonly Endpoint[]): void;
}

/** `address:port/PROTOCOL`, upstream's VirtualServer.String(). */
export function virtualServerKey(protocol: Protocol, address: string, port: number): string {
  return `${joinHostPort(address, port)}/${protocol}`;
}

/** The real servers of `endpoints` (weight 1, de-duplicated, sorted by key); those the kernel refuses go to `skip`. */
export function realServersOf(family: IPFamily, endpoints: readonly Endpoint[], skip: (what: string, address: string, why: string) => void): RealServer[] {
  const realServers = new Map<string, RealServer>();
  for (const ep of endpoints) {
    assertStateIP(ep.ip, family, 'endpoint IP');
    assertStatePort(ep.port, 'endpoint port');
    const why = refusedRealServerReason(ep.ip);
    if (why !== undefined) {
      skip('real server', ep.ip, why);
      continue;
    }
    const rsKey = joinHostPort(ep.ip, ep.port);
    if (!realServers.has(rsKey)) realServers.set(rsKey, { address: ep.ip, port: ep.port, weight: 1, key: rsKey });
  }
  return [...realServers.values()].sort(byKey);
}

/** The node's own addresses (canonical): never bound on kube-ipvs0 (upstream's nodeAddressSet). */
export function nodeAddressSet(localAddresses: readonly string[]): ReadonlySet<string> {
  return new Set(localAddresses.map((ip) => canonicalIP(ip)).filter((ip): ip is string => ip !== undefined));
}

export class StateBuilder implements ServicePortSink {
  readonly servers = new Map<string, VirtualServer>();
  readonly bind = new Set<string>();
  /** `<what> <address>: <why>` of every address left out (logged by the proxier). */
  readonly skipped = new Set<string>();
  /** The node's own addresses of the family: never bound on kube-ipvs0 (upstream's nodeAddressSet). */
  readonly nodeAddresses: ReadonlySet<string>;
  readonly entries = new Map<IpsetRole, Set<string>>();
  readonly noLocal = { internal: 0, external: 0 };

  constructor(
    readonly family: IPFamily,
    readonly scheduler: string,
    readonly flags: readonly SchedulerFlag[],
    localAddresses: readonly string[],
  ) {
    this.nodeAddresses = nodeAddressSet(localAddresses);
  }

  skip(what: string, address: string, why: string): void {
    this.skipped.add(`${what} ${address}: ${why}`);
  }

  /** Binds a service address on kube-ipvs0, unless the kernel refuses it there. */
  bindVip(ip: string): void {
    const why = unbindableReason(ip);
    if (why === undefined) this.bind.add(ip);
    else this.skip('kube-ipvs0 address', ip, why);
  }

  /** Binds an external or load-balancer IP on kube-ipvs0 unless the node already has it. */
  bindUnlessLocal(ip: string): void {
    if (!this.nodeAddresses.has(ip)) this.bindVip(ip);
  }

  entry(role: IpsetRole, entry: string): void {
    let set = this.entries.get(role);
    if (set === undefined) this.entries.set(role, (set = new Set()));
    set.add(entry);
  }

  virtualServer(protocol: Protocol, address: string, port: number, persistenceTimeout: number, endpoints: readonly Endpoint[]): void {
    const key = virtualServerKey(protocol, address, port);
    if (this.servers.has(key)) return; // the first claimant wins (README, "Where we differ from upstream", 3)
    const realServers = realServersOf(this.family, endpoints, (what, ip, why) => this.skip(what, ip, why));
    this.servers.set(key, { protocol, address, port, scheduler: this.scheduler, flags: this.flags, persistenceTimeout, key, realServers });
  }

  finish(): DesiredIpvsState {
    const virtualServers: VirtualServer[] = [...this.servers.values()].sort(byKey);
    for (const ip of this.bind) this.entry('KUBE-IPVS-IPS', ip);
    const ipsets = ipsetCatalogue(this.family).map((set) => ({ set, entries: [...(this.entries.get(set.role) ?? [])].sort() }));
    return {
      family: this.family,
      virtualServers,
      bindAddresses: [...this.bind].sort(),
      ipsets,
      noLocalEndpoints: { ...this.noLocal },
      skippedAddresses: [...this.skipped].sort(),
    };
  }
}
