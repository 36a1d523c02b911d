/**
 * The virtual server table of the in-memory kernel: applies `ipvsadm --restore` text (read by
 * ipvsadm-line.ts, the same reader as the save parser) as ipvsadm 1.31 on Debian's 6.1 kernel did
 * in the QEMU guest:
 * - every line is tried, a failing one does not stop the rest, and each failure gives ipvsadm's
 *   message: "Service already exists" (-A), "No such service" (-E/-D), "Service not defined"
 *   (-a/-e/-d on a missing service), "Destination already exists" (-a), "No such destination"
 *   (-e/-d), "Scheduler or persistence engine not found" (-A/-E with an unknown scheduler), and for
 *   an unreadable line the reader's words; apply returns the messages (ipvsadm prints them on
 *   stderr and exits 0);
 * - `-E` replaces scheduler, flags and persistence with the line's (no `-p` clears persistence)
 *   and keeps the real servers; `-e` replaces weight and forwarding; `-D` drops the real servers.
 * - a real server the kernel will not route to (0.0.0.0, multicast, 255.255.255.255, `::`, IPv6
 *   multicast or link-local: measured in the same guest, the rule in state/kernel-refused-addresses.ts)
 *   fails with "Invalid operation.  Possibly wrong module version, address not unicast, ..."; the
 *   kernel's exception for the node's own link-local address is not modelled.
 * Firewall-mark services are not modelled (our text never has them): such a line is a failure.
 */
import { IPVSADM_DEFAULT_SCHEDULER, IpvsadmLineError, parseIpvsadmLine, type IpvsadmService } from './ipvsadm-line.js';
import type { RealServer, VirtualServer } from '../state/ipvs-state.js';
import { refusedRealServerReason } from '../state/kernel-refused-addresses.js';

const NOT_UNICAST = 'Invalid operation.  Possibly wrong module version, address not unicast, ...';

/** The kernel's schedulers (Debian 6.1 builds every one as a module). */
export const IPVS_SCHEDULERS: ReadonlySet<string> = new Set(['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos']);

interface Entry {
  vs: Omit<VirtualServer, 'realServers'>;
  readonly realServers: Map<string, RealServer>;
}

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export class MemoryIpvsTable {
  private readonly services = new Map<string, Entry>();

  /** Applies every line; returns one message per failed line (empty when all succeeded). */
  apply(batch: string): string[] {
    const messages: string[] = [];
    for (const line of batch.split('\n')) {
      if (line.trim() === '') continue;
      const message = this.applyLine(line);
      if (message !== undefined) messages.push(message);
    }
    return messages;
  }

  private applyLine(line: string): string | undefined {
    let parsed;
    try {
      parsed = parseIpvsadmLine(line);
    } catch (e) {
      if (e instanceof IpvsadmLineError) return `${e.message} (in ${JSON.stringify(line.slice(0, 200))})`;
      throw e;
    }
    if ('fwmark' in parsed.service) return 'firewall-mark services are not supported by the in-memory kernel';
    const service: IpvsadmService = parsed.service;
    const entry = this.services.get(service.key);
    switch (parsed.command) {
      case '-A':
      case '-E': {
        const options = parsed.options ?? { scheduler: IPVSADM_DEFAULT_SCHEDULER, flags: [], persistenceTimeout: 0 };
        if (parsed.command === '-A' && entry !== undefined) return 'Service already exists';
        if (parsed.command === '-E' && entry === undefined) return 'No such service';
        if (!IPVS_SCHEDULERS.has(options.scheduler)) return 'Scheduler or persistence engine not found';
        const { protocol, address, port, key } = service;
        const vs = { protocol, address, port, key, ...options };
        if (entry === undefined) this.services.set(key, { vs, realServers: new Map() });
        else entry.vs = vs;
        return undefined;
      }
      case '-D':
        if (entry === undefined) return 'No such service';
        this.services.delete(service.key);
        return undefined;
      default: {
        if (entry === undefined) return 'Service not defined';
        const rs = parsed.server as RealServer;
        const present = entry.realServers.has(rs.key);
        if (parsed.command === '-a' && present) return 'Destination already exists';
        if (parsed.command === '-a' && refusedRealServerReason(rs.address) !== undefined) return NOT_UNICAST;
        if (parsed.command !== '-a' && !present) return 'No such destination';
        if (parsed.command === '-d') entry.realServers.delete(rs.key);
        else entry.realServers.set(rs.key, rs);
        return undefined;
      }
    }
  }

  /** Every virtual server, sorted by key, real servers too (what `ipvsadm --save -n` would list). */
  list(): VirtualServer[] {
    return [...this.services.values()]
      .map((e): VirtualServer => ({ ...e.vs, realServers: [...e.realServers.values()].sort(byKey) }))
      .sort(byKey);
  }

  has(vsKey: string, rsKey?: string): boolean {
    const entry = this.services.get(vsKey);
    return entry !== undefined && (rsKey === undefined || entry.realServers.has(rsKey));
  }
}
