/**
 * MemoryIpvsKernel: an IpvsKernel held in memory, for --dry-run (any host, no root, nothing on the
 * host touched) and for the proxier's specs. It APPLIES the very text the host client would hand to
 * the tools, with the tools' measured behaviour (memory-ipvs-table.ts for ipvsadm, memory-ipsets.ts
 * for `ipset restore -exist`, link-batch.ts lines for `ip -batch -`), after the same
 * assertRestorePayload check, and fails with the same IpvsKernelCommandError and the tools' words:
 * - ipvsadm: every line is tried; any failed line makes the call throw, listing each message;
 * - ipset: stops at the first failing line;
 * - ip: stops at the first failing line ("RTNETLINK answers: File exists", "Command failed -:N"; the
 *   kernel's refusal of `::`, `::1` and IPv6 multicast; 0.0.0.0 accepted but never listed); a
 *   batch whose `link add` finds kube-ipvs0 already there is run again without it, by the same
 *   client-side step as the host kernel's (link-add-race.ts): both families' proxiers share this
 *   one kernel in a dual-stack dry run, as they share one network namespace on a node.
 * Reads give what the real tools would print, parsed the same way: virtual servers sorted by key,
 * sets in creation order, bound addresses sorted, connection counts of every present real server
 * (zero unless setConnections said otherwise).
 *
 * Every call is recorded (`calls`: method + the text it carried), so a spec can assert that an
 * unchanged sync writes nothing (`writes()` is empty) and that a sync runs one process per tool.
 * `dump(family)` gives the bodies of the dry-run sections `# ipvs`, `# ipset` and `# kube-ipvs0`.
 */
import type { IPFamily } from '@kube-proxy/core';
import { addEntryLine, createSetLine } from '../batch/ipset-text.js';
import { addServerLine, addServiceLine } from '../batch/ipvsadm-text.js';
import { ipsetCatalogue } from '../state/ipset-catalogue.js';
import type { RealServer, VirtualServer } from '../state/ipvs-state.js';
import type { IpvsConnections, IpvsKernel, RealServerConnections } from './ipvs-kernel.js';
import { IpvsKernelCommandError } from './kernel-command-error.js';
import { applyLinkChangesSharingLink } from './link-add-race.js';
import { linkBatchLines, parseLinkBatchLine, type LinkChange } from './link-batch.js';
import { IpsetRestoreError, MemoryIpsets } from './memory-ipsets.js';
import { MemoryIpvsTable } from './memory-ipvs-table.js';
import { guardPayload } from './payload-guard.js';

export type IpvsKernelMethod = keyof IpvsKernel;
const APPLY_METHODS: ReadonlySet<IpvsKernelMethod> = new Set<IpvsKernelMethod>(['applyIpvsadm', 'applyIpset', 'applyLinkChanges']);

export interface IpvsKernelCall {
  readonly method: IpvsKernelMethod;
  /** The batch an apply call carried (for applyLinkChanges: the `ip -batch -` text); '' for reads. */
  readonly text: string;
  /** The family a per-family read asked for. */
  readonly family?: IPFamily;
}

/** The bodies of the dry-run sections (each line newline-terminated; '' when empty). */
export interface IpvsKernelDump {
  /** `# ipvs`: each virtual server's `-A` line followed by its `-a` lines, in key order. */
  readonly ipvs: string;
  /** `# ipset`: `create` + `add` lines of the family's catalogue sets that exist, in catalogue order, entries sorted. */
  readonly ipset: string;
  /** `# kube-ipvs0`: one `ADDRESS/32` or `ADDRESS/128` per line, sorted. */
  readonly kubeIpvs0: string;
}

/** `ip addr add` of these is refused by the kernel (measured in the QEMU guest; state/kernel-refused-addresses.ts). */
const REFUSED_BINDS: ReadonlySet<string> = new Set(['::', '::1']);
const CANNOT_ASSIGN = 'RTNETLINK answers: Cannot assign requested address';

const IPVSADM_RESTORE = ['--restore'] as const;
const IPSET_RESTORE = ['restore', '-exist'] as const;
const IP_BATCH = ['-batch', '-'] as const;

function familyOf(address: string): IPFamily {
  return address.includes(':') ? 'IPv6' : 'IPv4';
}

function text(lines: readonly string[]): string {
  return lines.map((l) => l + '\n').join('');
}

/** `-a` in the notation `ipvsadm --save -n` prints, also for servers someone else made with -g / -i. */
function serverLine(vs: VirtualServer, rs: RealServer): string {
  let line = addServerLine(vs, rs);
  if (rs.forwarding !== undefined) line = line.replace(/ -m -w /, rs.forwarding === 'route' ? ' -g -w ' : ' -i -w ');
  return rs.otherOptions === undefined ? line : `${line} ${rs.otherOptions.join(' ')}`;
}

function serviceLine(vs: VirtualServer): string {
  const line = addServiceLine(vs);
  return vs.otherOptions === undefined ? line : `${line} ${vs.otherOptions.join(' ')}`;
}

export class MemoryIpvsKernel implements IpvsKernel {
  /** Every call, in order. */
  readonly calls: IpvsKernelCall[] = [];
  private readonly table = new MemoryIpvsTable();
  private readonly ipsets = new MemoryIpsets();
  /** kube-ipvs0's addresses (both families); null while the link does not exist. */
  private link: Set<string> | null = null;
  private readonly connections = new Map<string, Map<string, RealServerConnections>>();

  /** The apply calls that carried something, i.e. the tool processes a real node would have run. */
  writes(): IpvsKernelCall[] {
    return this.calls.filter((c) => APPLY_METHODS.has(c.method) && c.text !== '');
  }

  callsOf(method: IpvsKernelMethod): IpvsKernelCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  clearCalls(): void {
    this.calls.length = 0;
  }

  /**
   * The connection counts /proc/net/ip_vs will show for one present real server (keys as
   * VirtualServer.key / RealServer.key). Counts go with the server: deleting it drops them.
   */
  setConnections(vsKey: string, rsKey: string, active: number, inactive: number): void {
    if (!this.table.has(vsKey, rsKey)) throw new Error(`setConnections: no real server ${rsKey} behind ${vsKey}`);
    if (![active, inactive].every((n) => Number.isInteger(n) && n >= 0)) throw new Error('setConnections: counts must be integers ≥ 0');
    let byServer = this.connections.get(vsKey);
    if (byServer === undefined) this.connections.set(vsKey, (byServer = new Map()));
    byServer.set(rsKey, { active, inactive });
  }

  async readVirtualServers(family: IPFamily): Promise<VirtualServer[]> {
    this.calls.push({ method: 'readVirtualServers', text: '', family });
    return this.table.list().filter((vs) => familyOf(vs.address) === family);
  }

  async applyIpvsadm(batch: string): Promise<void> {
    this.calls.push({ method: 'applyIpvsadm', text: batch });
    if (batch === '') return;
    guardPayload(batch);
    const messages: string[] = [];
    for (const line of batch.split('\n')) {
      messages.push(...this.table.apply(line));
      this.forgetGoneConnections(); // a server deleted and added again starts from zero
    }
    if (messages.length > 0) {
      throw new IpvsKernelCommandError('ipvsadm', IPVSADM_RESTORE, { exitCode: 0, stdout: '', stderr: text(messages) });
    }
  }

  async readIpsets(): Promise<Map<string, string[]>> {
    this.calls.push({ method: 'readIpsets', text: '' });
    return this.ipsets.save();
  }

  async applyIpset(script: string): Promise<void> {
    this.calls.push({ method: 'applyIpset', text: script });
    if (script === '') return;
    guardPayload(script);
    try {
      this.ipsets.apply(script);
    } catch (e) {
      if (e instanceof IpsetRestoreError) {
        throw new IpvsKernelCommandError('ipset', IPSET_RESTORE, { exitCode: 1, stdout: '', stderr: `ipset v7.17: Error in line ${e.lineNo}: ${e.reason}\n` });
      }
      throw e;
    }
  }

  async readBoundAddresses(family: IPFamily): Promise<string[] | null> {
    this.calls.push({ method: 'readBoundAddresses', text: '', family });
    if (this.link === null) return null;
    return [...this.link].filter((a) => familyOf(a) === family).sort();
  }

  async applyLinkChanges(change: LinkChange): Promise<void> {
    await applyLinkChangesSharingLink(change, (c) => this.runLinkBatch(c));
  }

  /** One `ip -batch -` process: recorded as one call, applied line by line until a line fails. */
  private async runLinkBatch(change: LinkChange): Promise<void> {
    const lines = linkBatchLines(change);
    const batch = text(lines);
    this.calls.push({ method: 'applyLinkChanges', text: batch });
    if (lines.length === 0) return;
    guardPayload(batch, lines.length);
    lines.forEach((line, index) => {
      const failed = (why: string): never => {
        throw new IpvsKernelCommandError('ip', IP_BATCH, { exitCode: 1, stdout: '', stderr: `${why}\nCommand failed -:${index + 1}\n` });
      };
      const op = parseLinkBatchLine(line);
      if (op.op === 'link-add') {
        if (this.link !== null) failed('RTNETLINK answers: File exists');
        this.link = new Set();
        return;
      }
      const link = this.link ?? failed('Cannot find device "kube-ipvs0"');
      if (op.op === 'address-add') {
        if (link.has(op.address)) failed('RTNETLINK answers: File exists');
        // IPv6 multicast: canonical text starts with ff (ff00::/8); no IPv4 text does.
        if (REFUSED_BINDS.has(op.address) || op.address.startsWith('ff')) failed(CANNOT_ASSIGN);
        // 0.0.0.0/32 is accepted and never listed back (measured).
        if (op.address !== '0.0.0.0') link.add(op.address);
      } else {
        if (!link.has(op.address)) failed('RTNETLINK answers: Cannot assign requested address');
        link.delete(op.address);
      }
    });
  }

  async readConnections(): Promise<IpvsConnections> {
    this.calls.push({ method: 'readConnections', text: '' });
    const result = new Map<string, Map<string, RealServerConnections>>();
    for (const vs of this.table.list()) {
      const set = this.connections.get(vs.key);
      result.set(vs.key, new Map(vs.realServers.map((rs) => [rs.key, set?.get(rs.key) ?? { active: 0, inactive: 0 }])));
    }
    return result;
  }

  /** The dry-run section bodies of `family` (not a recorded call: it reads no tool). */
  dump(family: IPFamily): IpvsKernelDump {
    const ipvs: string[] = [];
    for (const vs of this.table.list()) {
      if (familyOf(vs.address) !== family) continue;
      ipvs.push(serviceLine(vs));
      for (const rs of vs.realServers) ipvs.push(serverLine(vs, rs));
    }
    const sets = this.ipsets.save();
    const ipset: string[] = [];
    for (const def of ipsetCatalogue(family)) {
      const entries = sets.get(def.name);
      if (entries === undefined) continue;
      ipset.push(createSetLine(def), ...[...entries].sort().map((e) => addEntryLine(def, e)));
    }
    const prefix = family === 'IPv6' ? 128 : 32;
    const bound = this.link === null ? [] : [...this.link].filter((a) => familyOf(a) === family).sort().map((a) => `${a}/${prefix}`);
    return { ipvs: text(ipvs), ipset: text(ipset), kubeIpvs0: text(bound) };
  }

  /** Counts belong to a real server: once it (or its virtual server) is gone, so are they. */
  private forgetGoneConnections(): void {
    for (const [vsKey, byServer] of this.connections) {
      for (const rsKey of byServer.keys()) if (!this.table.has(vsKey, rsKey)) byServer.delete(rsKey);
      if (byServer.size === 0) this.connections.delete(vsKey);
    }
  }
}
