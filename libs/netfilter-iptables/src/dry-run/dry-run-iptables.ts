import type { IPFamily } from '@kube-proxy/core';
import { IptablesError, IptablesRestoreError } from '../errors.js';
import type { IptablesInterface, RestoreOptions, RulePosition, RuleSpec, Table } from '../types.js';
import { InMemoryRestoreError, InMemoryTables, InMemoryTablesError } from './in-memory-tables.js';

function asIptablesError(err: unknown): unknown {
  if (err instanceof InMemoryTablesError) return new IptablesError(err.message, err.exitCode, err.message);
  return err;
}

/**
 * IptablesInterface over an InMemoryTables model: the --dry-run "iptables". The proxier runs exactly
 * the same code against it as against the host's binaries; nothing touches the host.
 */
export class DryRunIptables implements IptablesInterface {
  readonly description = 'dry-run';

  constructor(
    readonly family: IPFamily,
    readonly tables: InMemoryTables = new InMemoryTables(),
  ) {}

  async restore(payload: string, options: RestoreOptions): Promise<void> {
    this.restoreWith(() => this.tables.restore(payload, { noFlush: options.noFlush }));
  }

  async restoreChunks(chunks: readonly Uint8Array[], options: RestoreOptions): Promise<void> {
    this.restoreWith(() => this.tables.restoreChunks(chunks, { noFlush: options.noFlush }));
  }

  private restoreWith(apply: () => void): void {
    try {
      apply();
    } catch (err) {
      if (err instanceof InMemoryRestoreError) {
        throw new IptablesRestoreError(`dry-run iptables-restore failed: ${err.message}`, 1, err.message, err.line);
      }
      throw err;
    }
  }

  async saveTable(table: Table): Promise<string> {
    return this.tables.save(table);
  }

  async ensureChain(table: Table, chain: string): Promise<boolean> {
    return this.call(() => this.tables.ensureChain(table, chain));
  }

  async ensureRule(position: RulePosition, table: Table, chain: string, args: readonly string[]): Promise<boolean> {
    return this.call(() => this.tables.ensureRule(position, table, chain, args));
  }

  async deleteRule(table: Table, chain: string, args: readonly string[]): Promise<void> {
    this.tables.deleteRule(table, chain, args);
  }

  async flushChain(table: Table, chain: string): Promise<void> {
    this.call(() => this.tables.flushChain(table, chain));
  }

  async deleteChain(table: Table, chain: string): Promise<void> {
    this.call(() => this.tables.deleteChain(table, chain));
  }

  async chainExists(table: Table, chain: string): Promise<boolean> {
    return this.tables.chainExists(table, chain);
  }

  async missingRules(table: Table, rules: readonly RuleSpec[]): Promise<RuleSpec[]> {
    return rules.filter((r) => !this.tables.hasRule(table, r.chain, r.args));
  }

  private call<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw asIptablesError(err);
    }
  }
}
