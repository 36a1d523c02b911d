/**
 * One service port's share of the desired IPVS state: its virtual servers (with their real servers),
 * its set entries, the addresses it binds on kube-ipvs0, the addresses it leaves out and whether its
 * Local policy finds no local endpoint. The incremental index (ipvs-state-index.ts) keeps one per
 * service port and rebuilds only the changed ones; build-desired-state.ts' addServicePort writes it,
 * the same code as the full build, so the two cannot read a Service differently.
 *
 * What the full build resolves across service ports is kept apart here so the index can resolve it
 * the same way: a virtual server two service ports claim goes to the first in key order, and the
 * real servers the kernel refuses are reported only for the claim that wins (the full build never
 * looks at a losing claim's endpoints).
 */
import type { Endpoint, Protocol, ServicePort } from '@kube-proxy/core';
import { addServicePort, type PortInputs } from './build-desired-state.js';
import type { IpsetRole } from './ipset-catalogue.js';
import type { VirtualServer } from './ipvs-state.js';
import { unbindableReason } from './kernel-refused-addresses.js';
import { realServersOf, virtualServerKey, type ServicePortSink } from './state-builder.js';

/** One virtual server of a service port, with the real servers the kernel refuses (`<what> <address>: <why>`). */
export interface FragmentServer {
  readonly vs: VirtualServer;
  readonly skipped: readonly string[];
}

export interface PortFragment {
  readonly servers: readonly FragmentServer[];
  /** Set entries as parallel lists (role i holds entry i), de-duplicated; KUBE-IPVS-IPS is `binds`. */
  readonly roles: readonly IpsetRole[];
  readonly entries: readonly string[];
  /** Addresses bound on kube-ipvs0 (also the KUBE-IPVS-IPS entries). */
  readonly binds: readonly string[];
  /** `<what> <address>: <why>` of the port's own addresses left out (not its real servers: see FragmentServer). */
  readonly skipped: readonly string[];
  readonly noLocalInternal: number;
  readonly noLocalExternal: number;
}

const NONE: readonly never[] = [];

function pushUnique(list: string[], value: string): void {
  if (!list.includes(value)) list.push(value);
}

/** The sink addServicePort writes one service port to. */
class FragmentBuilder implements ServicePortSink {
  readonly noLocal = { internal: 0, external: 0 };
  readonly servers: FragmentServer[] = [];
  readonly roles: IpsetRole[] = [];
  readonly entries: string[] = [];
  readonly binds: string[] = [];
  readonly skipped: string[] = [];

  constructor(
    private readonly inputs: PortInputs,
    private readonly nodeAddresses: ReadonlySet<string>,
  ) {}

  get family() {
    return this.inputs.family;
  }

  skip(what: string, address: string, why: string): void {
    pushUnique(this.skipped, `${what} ${address}: ${why}`);
  }

  bindVip(ip: string): void {
    const why = unbindableReason(ip);
    if (why === undefined) pushUnique(this.binds, ip);
    else this.skip('kube-ipvs0 address', ip, why);
  }

  bindUnlessLocal(ip: string): void {
    if (!this.nodeAddresses.has(ip)) this.bindVip(ip);
  }

  entry(role: IpsetRole, entry: string): void {
    for (let i = 0; i < this.entries.length; i++) if (this.entries[i] === entry && this.roles[i] === role) return;
    this.roles.push(role);
    this.entries.push(entry);
  }

  virtualServer(protocol: Protocol, address: string, port: number, persistenceTimeout: number, endpoints: readonly Endpoint[]): void {
    const key = virtualServerKey(protocol, address, port);
    if (this.servers.some((s) => s.vs.key === key)) return; // within one port, the first claim wins too
    const skipped: string[] = [];
    const realServers = realServersOf(this.inputs.family, endpoints, (what, ip, why) => pushUnique(skipped, `${what} ${ip}: ${why}`));
    const { scheduler, flags } = this.inputs;
    this.servers.push({ vs: { protocol, address, port, scheduler, flags, persistenceTimeout, key, realServers }, skipped: skipped.length === 0 ? NONE : skipped });
  }

  finish(): PortFragment {
    const empty = <T>(list: T[]): readonly T[] => (list.length === 0 ? NONE : list);
    return {
      servers: empty(this.servers),
      roles: empty(this.roles),
      entries: empty(this.entries),
      binds: empty(this.binds),
      skipped: empty(this.skipped),
      noLocalInternal: this.noLocal.internal,
      noLocalExternal: this.noLocal.external,
    };
  }
}

/** The fragment of one service port of `inputs.family` with its endpoints. */
export function buildPortFragment(svc: ServicePort, endpoints: readonly Endpoint[], inputs: PortInputs, nodeAddresses: ReadonlySet<string>): PortFragment {
  const b = new FragmentBuilder(inputs, nodeAddresses);
  addServicePort(b, svc, endpoints, inputs.ctx, inputs.nodeIPs);
  return b.finish();
}
