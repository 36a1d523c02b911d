/**
 * The error every IpvsKernel gives when a tool (or the in-memory kernel standing in for it) refuses
 * a batch: the command line, its exit code and the tool's own words from stderr, so a log line says
 * what ipvsadm, ipset or ip said.
 */
import type { CommandResult } from '@kube-proxy/core';

export class IpvsKernelCommandError extends Error {
  constructor(
    readonly command: string,
    readonly args: readonly string[],
    readonly result: CommandResult,
  ) {
    const words = (result.spawnError ?? result.stderr).trim() || 'no message';
    super(`${[command, ...args].join(' ')} failed (exit ${String(result.exitCode)}): ${words}`);
    this.name = 'IpvsKernelCommandError';
  }
}
