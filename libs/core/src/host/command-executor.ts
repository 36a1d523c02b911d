/** Result of one external command. `exitCode` is null when the child died of a signal or failed to start. */
export interface CommandResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when the binary could not be started at all (ENOENT, EACCES, …). */
  readonly spawnError?: string;
}

export interface CommandOptions {
  /**
   * Written to the child's stdin: a string, or byte chunks written in order. Chunks let a caller hand
   * over a large payload (a 10k-service iptables-restore payload is ~18 MB) without joining it into
   * one string or buffer first: each join is another copy at the process's memory high-water mark.
   */
  readonly input?: string | readonly Uint8Array[];
  readonly timeoutMs?: number;
  /** Send the child's stdout nowhere (result.stdout is ""): for tools whose stdout nobody reads. */
  readonly discardStdout?: boolean;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs external tools (iptables-restore, conntrack, ipset, …). Always an argument array, never a shell,
 * so nothing from the API server can be interpreted as shell syntax.
 */
export interface CommandExecutor {
  run(command: string, args: readonly string[], options?: CommandOptions): Promise<CommandResult>;
}

export const COMMAND_EXECUTOR = Symbol.for('kube-proxy.CommandExecutor');
