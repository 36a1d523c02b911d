/**
 * What the kernel's IPVS table of one family holds after our last successful sync: the kernel
 * target (kernel-target.ts) of that sync, per virtual server key, with the real servers kept at
 * weight 0 for graceful termination. A partial sync diffs the touched virtual servers against this
 * instead of reading the whole table back (`ipvsadm --save -n` of 10,000 services is megabytes);
 * the periodic repair sync reads the kernel back and replaces it whole. It is only ever advanced
 * after the batches were applied, so a failed apply leaves it behind and the proxier drops it.
 */
import type { IPFamily } from '@kube-proxy/core';
import { diffIpvsadm } from '../batch/diff-batches.js';
import type { IpvsConnections } from '../kernel/ipvs-kernel.js';
import type { DesiredIpvsState, VirtualServer } from '../state/ipvs-state.js';
import { kernelTarget, type KernelTarget } from './kernel-target.js';

/** The batch a partial sync writes for the touched virtual servers, and what to record once it is applied. */
export interface PartialIpvs {
  readonly keys: readonly string[];
  readonly target: KernelTarget;
  readonly batch: string;
}

function vsOf(name: string): string {
  return name.slice(0, name.indexOf(' -> '));
}

export class AppliedIpvs {
  private readonly servers = new Map<string, VirtualServer>();
  /** Virtual server key → its real servers kept at weight 0 (re-checked by every sync until drained). */
  private readonly terminating = new Map<string, number>();
  private realServerCount = 0;
  private terminatingCount = 0;

  constructor(readonly family: IPFamily) {}

  get virtualServers(): number {
    return this.servers.size;
  }

  get realServers(): number {
    return this.realServerCount;
  }

  get terminatingRealServers(): number {
    return this.terminatingCount;
  }

  /** After a repair sync: the kernel holds `target` and nothing else of ours. */
  replaceAll(target: KernelTarget): void {
    this.servers.clear();
    this.terminating.clear();
    this.realServerCount = 0;
    this.terminatingCount = 0;
    this.record([], target);
  }

  /**
   * The ipvsadm batch for the virtual servers `touched` (plus those with terminating real servers,
   * whose connections every sync looks at again), from what we applied to what `desired` says now.
   */
  async partial(touched: readonly string[], desired: (key: string) => VirtualServer | undefined, excludeCIDRs: readonly string[], connections: () => Promise<IpvsConnections>): Promise<PartialIpvs> {
    let keys = touched;
    if (this.terminating.size > 0) keys = [...new Set([...touched, ...this.terminating.keys()])].sort();
    const want: VirtualServer[] = [];
    const have: VirtualServer[] = [];
    for (const key of keys) {
      const d = desired(key);
      if (d !== undefined) want.push(d);
      const h = this.servers.get(key);
      if (h !== undefined) have.push(h);
    }
    const target = await kernelTarget({ desired: want, current: have, excludeCIDRs, connections });
    const state = (virtualServers: readonly VirtualServer[]): DesiredIpvsState => ({ family: this.family, virtualServers, bindAddresses: [], ipsets: [] });
    return { keys, target, batch: diffIpvsadm(state(have), state(target.virtualServers)) };
  }

  /** After a partial sync's batch was applied. */
  commit(p: PartialIpvs): void {
    this.record(p.keys, p.target);
  }

  private record(replaced: readonly string[], target: KernelTarget): void {
    for (const key of replaced) {
      const old = this.servers.get(key);
      if (old !== undefined) this.realServerCount -= old.realServers.length;
      this.servers.delete(key);
      this.terminatingCount -= this.terminating.get(key) ?? 0;
      this.terminating.delete(key);
    }
    for (const vs of target.virtualServers) {
      this.servers.set(vs.key, vs);
      this.realServerCount += vs.realServers.length;
    }
    for (const name of target.terminating) {
      const key = vsOf(name);
      this.terminating.set(key, (this.terminating.get(key) ?? 0) + 1);
      this.terminatingCount++;
    }
  }
}
