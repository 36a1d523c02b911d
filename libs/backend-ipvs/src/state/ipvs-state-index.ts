/**
 * IpvsStateIndex: the desired IPVS state of one family kept per service port (port-fragment.ts), so a
 * sync rebuilds only the service ports that changed and learns exactly which virtual servers, set
 * entries and kube-ipvs0 addresses that moved. What the full build resolves across service ports is
 * resolved here the same way: a virtual server claimed by several ports belongs to the first in key
 * order (the claim list is kept sorted), and set entries, bound addresses and left-out addresses are
 * counted, present while any port holds them. `materialize()` gives the very DesiredIpvsState
 * buildDesiredIpvsState gives for the same maps (ipvs-state-index.spec.ts checks it on random input).
 *
 * Everything a service port does not own (node addresses, --nodeport-addresses, node IP, scheduler,
 * local detection) is fixed per index: when one of them changes the proxier builds a new index.
 */
import type { Endpoint, EndpointsMap, ServicePort, ServicePortMap } from '@kube-proxy/core';
import { endpointsOf, portInputs, type IpvsStateOptions, type PortInputs } from './build-desired-state.js';
import { ipsetCatalogue, type IpsetRole } from './ipset-catalogue.js';
import type { DesiredIpvsState, VirtualServer } from './ipvs-state.js';
import { buildPortFragment, type FragmentServer, type PortFragment } from './port-fragment.js';
import { nodeAddressSet } from './state-builder.js';

interface Claim {
  readonly port: string;
  readonly server: FragmentServer;
}

/** One role's entries touched since the last takeChange(): entry → present before; the role's size before. */
interface TouchedRole {
  readonly sizeBefore: number;
  readonly entries: Map<string, boolean>;
}

/** What moved since the last takeChange() (or since the index was built). */
export interface IndexChange {
  /** Keys of the virtual servers some changed port claimed before or claims now (sorted). */
  readonly servers: readonly string[];
  /** Per catalogue set, in catalogue order: touched entries present before, and present now (each sorted). */
  readonly ipsetsBefore: ReadonlyMap<IpsetRole, readonly string[]>;
  readonly ipsetsAfter: ReadonlyMap<IpsetRole, readonly string[]>;
  /** Some set went from empty to not (or back): the iptables skeleton's set-match rules follow that. */
  readonly emptinessChanged: boolean;
  /** Roles whose entries changed (the skeleton reads the LB firewall sets' entries). */
  readonly rolesChanged: ReadonlySet<IpsetRole>;
  /** The list of left-out addresses changed. */
  readonly skippedChanged: boolean;
}

const BIND_ROLE: IpsetRole = 'KUBE-IPVS-IPS';
const NO_PORTS: readonly string[] = [];
const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function bump(counts: Map<string, number>, key: string, by: number): boolean {
  const n = (counts.get(key) ?? 0) + by;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
  return n === 0 || n === by; // present ↔ absent
}

export class IpvsStateIndex {
  readonly family: DesiredIpvsState['family'];
  private readonly inputs: PortInputs;
  private readonly nodeAddresses: ReadonlySet<string>;
  private readonly fragments = new Map<string, PortFragment>();
  /** Service (`ns/name`) → the keys of its ports the index holds: an endpoints change finds its ports without a scan. */
  private readonly portsByService = new Map<string, string[]>();
  private readonly claims = new Map<string, Claim[]>();
  private readonly sets = new Map<IpsetRole, Map<string, number>>();
  private readonly skipped = new Map<string, number>();
  private readonly noLocal = { internal: 0, external: 0 };
  private touchedServers = new Set<string>();
  private touchedRoles = new Map<IpsetRole, TouchedRole>();
  private skippedChanged = false;

  constructor(options: IpvsStateOptions) {
    this.inputs = portInputs(options);
    this.family = this.inputs.family;
    this.nodeAddresses = nodeAddressSet(options.localAddresses);
    for (const def of ipsetCatalogue(this.family)) this.sets.set(def.role, new Map());
  }

  /** An index of every service port of the family in the maps (the full build). */
  static build(serviceMap: ServicePortMap, endpointsMap: EndpointsMap, options: IpvsStateOptions): IpvsStateIndex {
    const index = new IpvsStateIndex(options);
    for (const [key, svc] of serviceMap) index.setPort(key, svc, endpointsOf(endpointsMap, key));
    index.takeChange();
    return index;
  }

  /** Rebuilds service port `key` from the maps (gone, or of the other family: removed). */
  update(key: string, serviceMap: ServicePortMap, endpointsMap: EndpointsMap): void {
    this.setPort(key, serviceMap.get(key), endpointsOf(endpointsMap, key));
  }

  /** The keys of the ports of Service `name` (`ns/name`) the index holds. */
  portsOf(name: string): readonly string[] {
    return this.portsByService.get(name) ?? NO_PORTS;
  }

  get noLocalEndpoints(): { internal: number; external: number } {
    return { ...this.noLocal };
  }

  /** `<what> <address>: <why>` of everything left out, sorted (as DesiredIpvsState.skippedAddresses). */
  skippedAddresses(): string[] {
    return [...this.skipped.keys()].sort();
  }

  /** The virtual server `key` as the full build would have it (the first claimant's), or undefined. */
  virtualServer(key: string): VirtualServer | undefined {
    return this.claims.get(key)?.[0]?.server.vs;
  }

  /** Whether kube-ipvs0 should hold `ip`. */
  binds(ip: string): boolean {
    return this.sets.get(BIND_ROLE)?.has(ip) ?? false;
  }

  private setPort(key: string, svc: ServicePort | undefined, endpoints: readonly Endpoint[]): void {
    const old = this.fragments.get(key);
    // A dual-stack Service's other family belongs to the other proxier.
    const now = svc !== undefined && svc.family === this.family ? buildPortFragment(svc, endpoints, this.inputs, this.nodeAddresses) : undefined;
    if (old !== undefined) this.apply(key, old, -1);
    if (now !== undefined) {
      if (old === undefined) this.indexPort(key, 1);
      this.fragments.set(key, now);
      this.apply(key, now, 1);
    } else if (old !== undefined) {
      this.indexPort(key, -1);
      this.fragments.delete(key);
    }
  }

  private indexPort(key: string, sign: 1 | -1): void {
    const colon = key.indexOf(':');
    const name = colon < 0 ? key : key.slice(0, colon);
    const list = this.portsByService.get(name);
    if (sign > 0) {
      if (list === undefined) this.portsByService.set(name, [key]);
      else list.push(key);
    } else if (list !== undefined) {
      const rest = list.filter((k) => k !== key);
      if (rest.length === 0) this.portsByService.delete(name);
      else this.portsByService.set(name, rest);
    }
  }

  /** Adds (+1) or removes (-1) one fragment's contributions, noting what they touched. */
  private apply(port: string, f: PortFragment, sign: 1 | -1): void {
    for (const server of f.servers) this.claim(port, server, sign);
    for (let i = 0; i < f.entries.length; i++) this.count(f.roles[i] as IpsetRole, f.entries[i] as string, sign);
    for (const ip of f.binds) this.count(BIND_ROLE, ip, sign);
    for (const s of f.skipped) this.countSkipped(s, sign);
    this.noLocal.internal += sign * f.noLocalInternal;
    this.noLocal.external += sign * f.noLocalExternal;
  }

  private claim(port: string, server: FragmentServer, sign: 1 | -1): void {
    const key = server.vs.key;
    this.touchedServers.add(key);
    const list = this.claims.get(key) ?? [];
    const winner = list[0];
    if (sign > 0) {
      let at = list.length;
      while (at > 0 && (list[at - 1] as Claim).port > port) at--;
      list.splice(at, 0, { port, server });
      this.claims.set(key, list);
    } else {
      const at = list.findIndex((c) => c.port === port);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0) this.claims.delete(key);
    }
    // Only the winning claim's refused real servers are reported (as the full build's first claimant's).
    const now = list[0];
    if (winner !== now) {
      for (const s of winner?.server.skipped ?? []) this.countSkipped(s, -1);
      for (const s of now?.server.skipped ?? []) this.countSkipped(s, 1);
    }
  }

  private count(role: IpsetRole, entry: string, sign: 1 | -1): void {
    const counts = this.sets.get(role) as Map<string, number>;
    let touched = this.touchedRoles.get(role);
    if (touched === undefined) this.touchedRoles.set(role, (touched = { sizeBefore: counts.size, entries: new Map() }));
    if (!touched.entries.has(entry)) touched.entries.set(entry, counts.has(entry));
    bump(counts, entry, sign);
  }

  private countSkipped(s: string, sign: 1 | -1): void {
    if (bump(this.skipped, s, sign)) this.skippedChanged = true;
  }

  /** What moved since the last call, and starts noting afresh. */
  takeChange(): IndexChange {
    const ipsetsBefore = new Map<IpsetRole, string[]>();
    const ipsetsAfter = new Map<IpsetRole, string[]>();
    const rolesChanged = new Set<IpsetRole>();
    let emptinessChanged = false;
    for (const [role, touched] of this.touchedRoles) {
      const counts = this.sets.get(role) as Map<string, number>;
      const before: string[] = [];
      const after: string[] = [];
      for (const [entry, was] of touched.entries) {
        const is = counts.has(entry);
        if (was === is) continue;
        (was ? before : after).push(entry);
        rolesChanged.add(role);
      }
      if ((touched.sizeBefore === 0) !== (counts.size === 0)) emptinessChanged = true;
      ipsetsBefore.set(role, before.sort());
      ipsetsAfter.set(role, after.sort());
    }
    const change: IndexChange = { servers: [...this.touchedServers].sort(), ipsetsBefore, ipsetsAfter, emptinessChanged, rolesChanged, skippedChanged: this.skippedChanged };
    this.touchedServers = new Set();
    this.touchedRoles = new Map();
    this.skippedChanged = false;
    return change;
  }

  /** The set entries of every catalogue set, sorted (what the skeleton renderer reads). */
  ipsets(): DesiredIpvsState['ipsets'] {
    return ipsetCatalogue(this.family).map((set) => ({ set, entries: [...(this.sets.get(set.role) as Map<string, number>).keys()].sort() }));
  }

  /** The whole desired state, equal to buildDesiredIpvsState's for the same maps and options. */
  materialize(): DesiredIpvsState {
    const virtualServers: VirtualServer[] = [];
    for (const list of this.claims.values()) virtualServers.push((list[0] as Claim).server.vs);
    return {
      family: this.family,
      virtualServers: virtualServers.sort(byKey),
      bindAddresses: [...(this.sets.get(BIND_ROLE) as Map<string, number>).keys()].sort(),
      ipsets: this.ipsets(),
      noLocalEndpoints: this.noLocalEndpoints,
      skippedAddresses: this.skippedAddresses(),
    };
  }
}
