import type { CommandExecutor, CommandOptions, CommandResult } from '@kube-proxy/core';

/** What `ip netns` accepts as a name, and nothing a shell or `ip` could read as an option. */
const NAMESPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The argument array that runs `command args…` inside namespace `ns`. */
export function netnsArgs(ns: string, command: string, args: readonly string[]): string[] {
  if (!NAMESPACE_NAME.test(ns)) throw new Error(`not a network namespace name: ${JSON.stringify(ns)}`);
  return ['netns', 'exec', ns, command, ...args];
}

/**
 * A CommandExecutor whose every command runs inside one network namespace, so a proxier driven by
 * the bench writes its nft transactions (and anything else it may run, e.g. conntrack) there and
 * never in the root namespace.
 */
export class NetnsExecutor implements CommandExecutor {
  constructor(
    private readonly inner: CommandExecutor,
    readonly namespace: string,
  ) {
    netnsArgs(namespace, 'true', []); // refuse a bad name now, not at the first command
  }

  run(command: string, args: readonly string[], options?: CommandOptions): Promise<CommandResult> {
    return this.inner.run('ip', netnsArgs(this.namespace, command, args), options);
  }
}
