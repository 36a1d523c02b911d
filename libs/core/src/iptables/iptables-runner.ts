import type { IptablesVariant } from '../capabilities/types.js';
import type { IPFamily } from '../model/protocol.js';
import type { CommandExecutor, CommandResult } from '../ports/command-executor.js';
import type { Logger } from '../ports/logger.js';
import { IptablesError, IptablesRestoreError, parseRestoreErrorLine } from './errors.js';
import type { IptablesInterface, RestoreOptions, RulePosition, Table } from './types.js';

/** `-w 5`: wait up to 5 s for the xtables lock (upstream's WaitString + WaitSecondsValue). */
export const WAIT_ARGS: readonly string[] = ['-w', '5'];

/** Upstream bounds `iptables -C` with a 5 minute context. */
const CHECK_TIMEOUT_MS = 5 * 60 * 1000;

/** The binaries of one family and one variant. */
export interface IptablesBinaries {
  /** `iptables-nft`, `ip6tables-legacy`, … */
  readonly iptables: string;
  readonly save: string;
  readonly restore: string;
}

export function iptablesBinaries(family: IPFamily, variant: IptablesVariant): IptablesBinaries {
  const base = family === 'IPv6' ? 'ip6tables' : 'iptables';
  return {
    iptables: `${base}-${variant}`,
    save: `${base}-${variant}-save`,
    restore: `${base}-${variant}-restore`,
  };
}

export interface IptablesOptions {
  readonly family: IPFamily;
  readonly variant: IptablesVariant;
  readonly executor: CommandExecutor;
  readonly logger: Logger;
  /** Extra environment for every invocation, e.g. `XTABLES_LOCKFILE` for tests in a netns. */
  readonly env?: Readonly<Record<string, string>>;
  /** A command prefix, e.g. `['ip', 'netns', 'exec', 'kp-test']` (tests only). */
  readonly commandPrefix?: readonly string[];
}

function outputOf(result: CommandResult): string {
  return [result.stderr, result.stdout, result.spawnError ?? ''].filter((s) => s.trim() !== '').join('\n').trim();
}

/**
 * The host's iptables for one family and one variant, through the CommandExecutor port (argument
 * arrays only, never a shell): upstream's pkg/util/iptables runner.
 */
export class Iptables implements IptablesInterface {
  readonly family: IPFamily;
  readonly variant: IptablesVariant;
  readonly binaries: IptablesBinaries;
  readonly description: string;
  private readonly executor: CommandExecutor;
  private readonly logger: Logger;
  private readonly env: Readonly<Record<string, string>> | undefined;
  private readonly prefix: readonly string[];
  /** Serialises invocations, as upstream's runner.mu. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: IptablesOptions) {
    this.family = options.family;
    this.variant = options.variant;
    this.binaries = iptablesBinaries(options.family, options.variant);
    this.description = this.binaries.iptables;
    this.executor = options.executor;
    this.logger = options.logger;
    this.env = options.env;
    this.prefix = options.commandPrefix ?? [];
  }

  async restore(payload: string, options: RestoreOptions): Promise<void> {
    const args = [...WAIT_ARGS];
    if (options.noFlush) args.push('--noflush');
    if (options.counters) args.push('--counters');
    const result = await this.exec(this.binaries.restore, args, { input: payload });
    if (result.exitCode !== 0) {
      const output = outputOf(result);
      throw new IptablesRestoreError(
        `${this.binaries.restore} failed (exit ${String(result.exitCode)}): ${output}`,
        result.exitCode,
        output,
        parseRestoreErrorLine(output),
      );
    }
  }

  async saveTable(table: Table): Promise<string> {
    const result = await this.exec(this.binaries.save, ['-t', table]);
    if (result.exitCode !== 0) {
      const output = outputOf(result);
      throw new IptablesError(
        `${this.binaries.save} -t ${table} failed (exit ${String(result.exitCode)}): ${output}`,
        result.exitCode,
        output,
      );
    }
    return result.stdout;
  }

  async ensureChain(table: Table, chain: string): Promise<boolean> {
    const result = await this.run('-N', table, chain, []);
    if (result.exitCode === 0) return false;
    // Exit 1: the chain already exists (upstream treats any exit 1 as "existed").
    if (result.exitCode === 1) return true;
    throw this.error(`error creating chain "${chain}"`, result);
  }

  async ensureRule(position: RulePosition, table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    if (await this.checkRule(table, chain, args)) return true;
    const result = await this.run(position, table, chain, args);
    if (result.exitCode !== 0) throw this.error('error appending rule', result);
    return false;
  }

  async deleteRule(table: Table, chain: string, args: readonly string[]): Promise<void> {
    if (!(await this.checkRule(table, chain, args))) return;
    const result = await this.run('-D', table, chain, args);
    if (result.exitCode !== 0) throw this.error('error deleting rule', result);
  }

  async flushChain(table: Table, chain: string): Promise<void> {
    const result = await this.run('-F', table, chain, []);
    if (result.exitCode !== 0) throw this.error(`error flushing chain "${chain}"`, result);
  }

  async deleteChain(table: Table, chain: string): Promise<void> {
    const result = await this.run('-X', table, chain, []);
    if (result.exitCode !== 0) throw this.error(`error deleting chain "${chain}"`, result);
  }

  async chainExists(table: Table, chain: string): Promise<boolean> {
    // Upstream's chainExists: `iptables -S CHAIN -t TABLE`, no side effects.
    const result = await this.run('-S', table, chain, []);
    if (result.exitCode === 0) return true;
    // Exit 1 = no such chain (iptables-nft says "chain `X' in table `t' is incompatible" for it).
    if (result.exitCode === 1) return false;
    throw this.error(`could not check chain "${chain}"`, result);
  }

  /** `iptables -C`: true when the rule exists; exit 1 is "no such rule" (upstream checkRuleUsingCheck). */
  private async checkRule(table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    const result = await this.run('-C', table, chain, args, CHECK_TIMEOUT_MS);
    if (result.exitCode === 0) return true;
    if (result.exitCode === 1) return false;
    throw this.error('error checking rule', result);
  }

  /** `iptables -w 5 OP CHAIN -t TABLE ARGS…` (upstream's makeFullArgs order). */
  private run(
    op: string,
    table: Table,
    chain: string,
    args: readonly string[],
    timeoutMs?: number,
  ): Promise<CommandResult> {
    return this.exec(this.binaries.iptables, [...WAIT_ARGS, op, chain, '-t', table, ...args], { timeoutMs });
  }

  private error(what: string, result: CommandResult): IptablesError {
    const output = outputOf(result);
    return new IptablesError(
      `${this.binaries.iptables}: ${what} (exit ${String(result.exitCode)}): ${output}`,
      result.exitCode,
      output,
    );
  }

  private exec(
    command: string,
    args: readonly string[],
    options: { input?: string; timeoutMs?: number } = {},
  ): Promise<CommandResult> {
    const run = async (): Promise<CommandResult> => {
      const [cmd, fullArgs] =
        this.prefix.length > 0 ? [this.prefix[0] as string, [...this.prefix.slice(1), command, ...args]] : [command, args];
      this.logger.debug('Running iptables', { command: cmd, args: fullArgs });
      return this.executor.run(cmd, fullArgs, {
        ...(options.input !== undefined ? { input: options.input } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(this.env ? { env: this.env } : {}),
      });
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
