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

interface VirtualServerDraft {
  readonly vs: Omit<VirtualServer, 'realServers'>;
  readonly realServers: Map<string, RealServer>;
}

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export class StateBuilder {
  readonly servers = new Map<string, VirtualServerDraft>();
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
    this.nodeAddresses = new Set(localAddresses.map((ip) => canonicalIP(ip)).filter((ip): ip is string => ip !== undefined));
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
    const key = `${joinHostPort(address, port)}/${protocol}`;
    if (this.servers.has(key)) return; // the first claimant wins (README, "Where we differ from upstream", 3)
    const realServers = new Map<string, RealServer>();
    for (const ep of endpoints) {
      assertStateIP(ep.ip, this.family, 'endpoint IP');
      assertStatePort(ep.port, 'endpoint port');
      const why = refusedRealServerReason(ep.ip);
      if (why !== undefined) {
        this.skip('real server', ep.ip, why);
        continue;
      }
      const rsKey = joinHostPort(ep.ip, ep.port);
      if (!realServers.has(rsKey)) realServers.set(rsKey, { address: ep.ip, port: ep.port, weight: 1, key: rsKey });
    }
    this.servers.set(key, { vs: { protocol, address, port, scheduler: this.scheduler, flags: this.flags, persistenceTimeout, key }, realServers });
  }

  finish(): DesiredIpvsState {
    const virtualServers: VirtualServer[] = [...this.servers.values()]
      .map((d) => ({ ...d.vs, realServers: [...d.realServers.values()].sort(byKey) }))
      .sort(byKey);
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
