import type { CommandExecutor, CommandOptions, CommandResult } from '@kube-proxy/core';

/**
 * In --dry-run the host must not change. Backends already skip their writes in dry-run; this wrapper
 * makes that a structural guarantee: only read-only invocations (version probes and *-save dumps used
 * by capability detection) reach the real executor, anything else is refused loudly.
 */
export class DryRunGuardExecutor implements CommandExecutor {
  constructor(private readonly inner: CommandExecutor) {}

  run(command: string, args: readonly string[], options?: CommandOptions): Promise<CommandResult> {
    if (isReadOnly(command, args)) return this.inner.run(command, args, options);
    return Promise.reject(new Error(`--dry-run: refusing to run ${command} ${args.join(' ')}`));
  }
}

function isReadOnly(command: string, args: readonly string[]): boolean {
  const base = command.slice(command.lastIndexOf('/') + 1);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V' || args[0] === 'version')) return true;
  // `nft --check` parses a probe ruleset against the kernel without committing it.
  if (base === 'nft' && args[0] === '--check') return true;
  return /^ip6?tables(-nft|-legacy)?-save$/.test(base) && args.every((a) => a === '-t' || /^[a-z]+$/.test(a));
}
