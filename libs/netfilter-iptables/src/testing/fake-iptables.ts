/**
 * Test support: a TypeScript port of upstream's iptablestest.FakeIPTables
 * (pkg/util/iptables/testing/fake.go), the in-memory "kernel" its proxier tests restore into. The
 * packet tracer over it (proxier_test.go's) is backend-iptables' render/testing/packet-tracer.ts.
 */
import type { IPTablesDump } from './iptables-dump.js';
import { getChain, getTable, parseIPTablesDump, parseRule } from './iptables-dump.js';

const BUILTIN_TARGETS = new Set(['ACCEPT', 'DROP', 'RETURN', 'REJECT', 'DNAT', 'SNAT', 'MASQUERADE', 'MARK']);

export class FakeIPTables {
  readonly dump: IPTablesDump = {
    tables: [
      { name: 'nat', chains: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'].map((n) => ({ name: n, packets: 0, bytes: 0, rules: [], deleted: false })) },
      { name: 'filter', chains: ['INPUT', 'FORWARD', 'OUTPUT'].map((n) => ({ name: n, packets: 0, bytes: 0, rules: [], deleted: false })) },
      { name: 'mangle', chains: [] },
    ],
  };

  ensureChain(table: string, chain: string): boolean {
    const t = getTable(this.dump, table);
    if (t === undefined) throw new Error(`no such table ${table}`);
    if (getChain(this.dump, table, chain) !== undefined) return true;
    t.chains.push({ name: chain, packets: 0, bytes: 0, rules: [], deleted: false });
    return false;
  }

  chainExists(table: string, chain: string): boolean {
    return getChain(this.dump, table, chain) !== undefined;
  }

  /** EnsureRule: the rule text is "-A CHAIN " + args joined by spaces (unquoted, as upstream's fake). */
  ensureRule(position: 'prepend' | 'append', table: string, chain: string, args: readonly string[]): boolean {
    const c = getChain(this.dump, table, chain);
    if (c === undefined) throw new Error(`no such chain ${chain}`);
    const raw = `-A ${chain} ${args.join(' ')}`;
    if (c.rules.some((r) => r.raw === raw)) return true;
    const parsed = parseRule(raw);
    if (position === 'append') c.rules.push(parsed);
    else c.rules.unshift(parsed);
    return false;
  }

  deleteChain(table: string, chain: string): void {
    const t = getTable(this.dump, table);
    if (t === undefined) return;
    t.chains = t.chains.filter((c) => c.name !== chain);
  }

  /** Names of the chains of a table (what the proxier gets from iptables-save). */
  chains(table: string): Set<string> {
    return new Set(getTable(this.dump, table)?.chains.map((c) => c.name) ?? []);
  }

  /** RestoreAll with --noflush --counters semantics; throws (and keeps the old state) on dangling jumps. */
  restoreAll(data: string): void {
    const newDump = parseIPTablesDump(data);
    for (const newTable of newDump.tables) {
      const oldTable = getTable(this.dump, newTable.name);
      if (oldTable === undefined) throw new Error(`no such table ${newTable.name}`);
      const backup = oldTable.chains.map((c) => ({ ...c }));
      for (const newChain of newTable.chains) {
        const oldChain = getChain(this.dump, newTable.name, newChain.name);
        if (oldChain === undefined && !newChain.deleted) oldTable.chains.push(newChain);
        else if (oldChain !== undefined && newChain.deleted) this.deleteChain(newTable.name, newChain.name);
        else if (oldChain !== undefined) {
          oldChain.rules = newChain.rules;
          oldChain.packets = newChain.packets;
          oldChain.bytes = newChain.bytes;
        }
      }
      const current = getTable(this.dump, newTable.name)!;
      for (const chain of current.chains) {
        for (const rule of chain.rules) {
          if (rule.jump === undefined || BUILTIN_TARGETS.has(rule.jump.value)) continue;
          if (getChain(this.dump, current.name, rule.jump.value) === undefined) {
            current.chains = backup;
            if (getChain(newDump, current.name, rule.jump.value) !== undefined) {
              throw new Error(`deleted chain "${rule.jump.value}" is referenced by existing rules`);
            }
            throw new Error(`rule "${rule.raw}" jumps to a non-existent chain`);
          }
        }
      }
    }
  }
}
