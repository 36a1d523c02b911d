import type { IptablesVariant, IPFamily, CommandExecutor, CommandResult, Logger } from '@kube-proxy/core';
import { lineBeforeHint, withNftCacheHint } from './nft-restore-cache-hint.js';
import { IptablesError, IptablesRestoreError, parseRestoreErrorLine } from './errors.js';
import { joinArgs, ruleTarget } from './rule-text.js';
import type { IptablesInterface, RestoreOptions, RulePosition, RuleSpec, Table } from './types.js';

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
    return this.restoreInput(payload, options);
  }

  async restoreChunks(chunks: readonly Uint8Array[], options: RestoreOptions): Promise<void> {
    return this.restoreInput(chunks, options);
  }

  private async restoreInput(payload: string | readonly Uint8Array[], options: RestoreOptions): Promise<void> {
    const args = [...WAIT_ARGS];
    if (options.noFlush) args.push('--noflush');
    if (options.counters) args.push('--counters');
    // iptables-nft: a full sync's tables each open with `-S` (nft-restore-cache-hint.ts); its
    // listing of the existing table is not wanted (17 MB at 10k services), so stdout is discarded.
    const hinted = this.variant === 'nft' && options.wholeTables === true;
    const input = hinted ? withNftCacheHint(typeof payload === 'string' ? [Buffer.from(payload, 'latin1')] : payload) : payload;
    const result = await this.exec(this.binaries.restore, args, { input, ...(hinted ? { discardStdout: true } : {}) });
    if (result.exitCode !== 0) {
      const output = outputOf(result);
      const line = parseRestoreErrorLine(output);
      throw new IptablesRestoreError(
        `${this.binaries.restore} failed (exit ${String(result.exitCode)}): ${output}`,
        result.exitCode,
        output,
        hinted && line !== undefined ? lineBeforeHint(input as Uint8Array[], line) : line,
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

  async missingRules(table: Table, rules: readonly RuleSpec[]): Promise<RuleSpec[]> {
    // All checks in one iptables-restore of `-C` lines: iptables-legacy reads the whole table from
    // the kernel once per process (hundreds of ms for a 10,000-service nat table), so one process
    // per table instead of one per rule. It stops at the first missing rule; that one is set aside
    // and the rest checked again (a healthy table costs exactly one run).
    // iptables-legacy-restore evaluates -C while parsing, so --test (never commit) is safe;
    // iptables-nft-restore evaluates at commit and --test would skip the checks, but a commit of
    // nothing but checks changes nothing.
    const args = [...WAIT_ARGS, '--noflush', ...(this.variant === 'legacy' ? ['--test'] : [])];
    let remaining = [...rules];
    const missing = new Set<RuleSpec>();
    for (let round = 0; round <= rules.length && remaining.length > 0; round++) {
      const payload = [`*${table}`, ...remaining.map((r) => `-C ${r.chain} ${joinArgs(r.args)}`), 'COMMIT', ''].join('\n');
      const result = await this.exec(this.binaries.restore, args, { input: payload });
      if (result.exitCode === 0) break;
      const blamed = blamedChecks(outputOf(result), remaining);
      if (blamed.length === 0) throw this.checkError(table, result);
      for (const r of blamed) missing.add(r);
      remaining = remaining.filter((r) => !missing.has(r));
    }
    return rules.filter((r) => missing.has(r));
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

  private checkError(table: Table, result: CommandResult): IptablesError {
    const output = outputOf(result);
    return new IptablesError(
      `${this.binaries.restore}: could not check rules in table ${table} (exit ${String(result.exitCode)}): ${output}`,
      result.exitCode,
      output,
    );
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
    options: { input?: string | readonly Uint8Array[]; timeoutMs?: number; discardStdout?: boolean } = {},
  ): Promise<CommandResult> {
    const run = async (): Promise<CommandResult> => {
      const [cmd, fullArgs] =
        this.prefix.length > 0 ? [this.prefix[0] as string, [...this.prefix.slice(1), command, ...args]] : [command, args];
      this.logger.debug('Running iptables', { command: cmd, args: fullArgs });
      return this.executor.run(cmd, fullArgs, {
        ...(options.input !== undefined ? { input: options.input } : {}),
        ...(options.discardStdout ? { discardStdout: true } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(this.env ? { env: this.env } : {}),
      });
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

// How iptables 1.8 says a check's jump target does not exist: legacy while parsing
// ("Couldn't load target `KUBE-SERVICES':No such file or directory"), nft at commit, without
// naming the line ("Chain 'KUBE-SERVICES' does not exist").
const MISSING_TARGET_PATTERNS: readonly RegExp[] = [/Couldn't load target `([^']+)'/, /Chain '([^']+)' does not exist/];

/**
 * Which of the checked rules (payload lines 2…, after `*table`) an iptables-restore failure blames:
 * the line of a failed `-C` ("line 3 failed": rule or chain missing), or every rule jumping to a
 * target iptables says does not exist. [] when the failure is about something else (lock, syntax).
 */
function blamedChecks(output: string, checked: readonly RuleSpec[]): RuleSpec[] {
  const failed = /line (\d+) failed/.exec(output);
  if (failed) {
    const rule = checked[Number(failed[1]) - 2];
    if (rule !== undefined) return [rule];
  }
  for (const re of MISSING_TARGET_PATTERNS) {
    const m = re.exec(output);
    if (!m) continue;
    const gone = m[1];
    const hits = checked.filter((r) => ruleTarget(r.args)?.target === gone || r.chain === gone);
    if (hits.length > 0) return hits;
  }
  return [];
}
