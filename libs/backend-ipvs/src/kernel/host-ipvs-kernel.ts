/**
 * HostIpvsKernel: the IpvsKernel of a real node, one process per call through core's
 * CommandExecutor (argument arrays, batches on stdin, never a shell), every batch checked by core's
 * assertRestorePayload before any process sees it. What the tools really do was measured on
 * Debian's 6.1 kernel in the QEMU guest (apps/proxy/e2e/ipvs-vm.e2e.spec.ts) and decides the
 * error handling (every batch first passes core's assertRestorePayload, payload-guard.ts):
 * - `ipvsadm --restore` does NOT stop at a failing line and exits 0 even then: it prints one
 *   message per failed line on stderr ("Service already exists", "No such destination",
 *   "--bogus: unknown option") and carries on. So any stderr output is a failure here, reported
 *   with ipvsadm's words; the caller re-reads the kernel on its next sync.
 * - `ipset restore` stops at the first failing line (exit 1, "Error in line N: …"). It runs with
 *   `-exist`, so a full script's `create` lines of sets that already exist (same type), `add` of
 *   entries already there, `del` of entries already gone and `destroy` of absent sets succeed;
 *   `create` with another type, `add`/`flush` on a missing set and malformed entries still fail.
 * - `ip -batch -` (without `-force`) stops at the first failing line and exits 1 ("RTNETLINK
 *   answers: File exists", "Command failed -:N"), so a failure never skips lines silently.
 * - `ip -o … addr show dev kube-ipvs0` of a missing link exits 1 with `Device "kube-ipvs0" does
 *   not exist.`: read as null (no link), not an error.
 * Empty batches run nothing.
 */
import { readFile } from 'node:fs/promises';
import { type CommandExecutor, type CommandResult, type IPFamily } from '@kube-proxy/core';
import type { VirtualServer } from '../state/ipvs-state.js';
import { isMissingDevice, parseIpAddrShow } from './ip-addr.js';
import { IpvsKernelCommandError } from './kernel-command-error.js';
import { parseIpsetSave } from './ipset-save.js';
import { parseIpvsadmSave } from './ipvsadm-save.js';
import { KUBE_IPVS_DEVICE, type IpvsConnections, type IpvsKernel } from './ipvs-kernel.js';
import { applyLinkChangesSharingLink } from './link-add-race.js';
import { linkBatchLines, type LinkChange } from './link-batch.js';
import { guardPayload } from './payload-guard.js';
import { parseProcNetIpVs } from './proc-net-ip-vs.js';

export const PROC_NET_IP_VS = '/proc/net/ip_vs';

export interface HostIpvsKernelOptions {
  /** Where the IPVS connection table is read (tests point it elsewhere); default /proc/net/ip_vs. */
  readonly procNetIpVsPath?: string;
  /** Bound of each tool run; default 60 s. */
  readonly timeoutMs?: number;
}

export class HostIpvsKernel implements IpvsKernel {
  private readonly procPath: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly executor: CommandExecutor,
    options: HostIpvsKernelOptions = {},
  ) {
    this.procPath = options.procNetIpVsPath ?? PROC_NET_IP_VS;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  private async run(command: string, args: readonly string[], input?: string): Promise<CommandResult> {
    return this.executor.run(command, args, input === undefined ? { timeoutMs: this.timeoutMs } : { input, timeoutMs: this.timeoutMs });
  }

  private async runOk(command: string, args: readonly string[], input?: string): Promise<CommandResult> {
    const result = await this.run(command, args, input);
    if (result.exitCode !== 0 || result.spawnError !== undefined) throw new IpvsKernelCommandError(command, args, result);
    return result;
  }

  async readVirtualServers(family: IPFamily): Promise<VirtualServer[]> {
    const { stdout } = await this.runOk('ipvsadm', ['--save', '-n']);
    return parseIpvsadmSave(stdout, family);
  }

  async applyIpvsadm(batch: string): Promise<void> {
    if (batch === '') return;
    guardPayload(batch);
    const result = await this.runOk('ipvsadm', ['--restore'], batch);
    // ipvsadm --restore reports failed lines on stderr and still exits 0 (see the header).
    if (result.stderr.trim() !== '') throw new IpvsKernelCommandError('ipvsadm', ['--restore'], result);
  }

  async readIpsets(): Promise<Map<string, string[]>> {
    const { stdout } = await this.runOk('ipset', ['save']);
    return parseIpsetSave(stdout);
  }

  async applyIpset(script: string): Promise<void> {
    if (script === '') return;
    guardPayload(script);
    await this.runOk('ipset', ['restore', '-exist'], script);
  }

  async readBoundAddresses(family: IPFamily): Promise<string[] | null> {
    const args = ['-o', '-f', family === 'IPv4' ? 'inet' : 'inet6', 'addr', 'show', 'dev', KUBE_IPVS_DEVICE];
    const result = await this.run('ip', args);
    if (result.exitCode !== 0 && result.spawnError === undefined && isMissingDevice(result.stderr, KUBE_IPVS_DEVICE)) return null;
    if (result.exitCode !== 0 || result.spawnError !== undefined) throw new IpvsKernelCommandError('ip', args, result);
    return parseIpAddrShow(result.stdout, family);
  }

  /** Both families' proxiers may race to create kube-ipvs0: see link-add-race.ts. */
  async applyLinkChanges(change: LinkChange): Promise<void> {
    await applyLinkChangesSharingLink(change, (c) => this.runLinkBatch(c));
  }

  private async runLinkBatch(change: LinkChange): Promise<void> {
    const lines = linkBatchLines(change);
    if (lines.length === 0) return;
    const batch = lines.map((l) => l + '\n').join('');
    guardPayload(batch, lines.length);
    await this.runOk('ip', ['-batch', '-'], batch);
  }

  async readConnections(): Promise<IpvsConnections> {
    let text: string;
    try {
      text = await readFile(this.procPath, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw e;
    }
    return parseProcNetIpVs(text);
  }
}
