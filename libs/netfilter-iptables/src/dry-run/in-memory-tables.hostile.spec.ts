/**
 * The dry-run tables fed hostile text directly (issue 10): they read a payload the way
 * iptables-restore does, refuse what the real tool would silently read differently, and never print
 * (iptables-save form) a line that a hostile argument could break.
 */
import { HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { tokenize } from '../rule-text.js';
import { DryRunIptables } from './dry-run-iptables.js';
import { InMemoryRestoreError, InMemoryTables } from './in-memory-tables.js';

const table = (rules: string): string => `*filter\n:KUBE-X - [0:0]\n${rules}COMMIT\n`;

describe('InMemoryTables with hostile text', () => {
  it('splits a rule line as iptables-restore does: a closing quote ends the argument', () => {
    const t = new InMemoryTables();
    // iptables-restore reads `"x" -j ACCEPT` after --comment as the comment `x` and the target ACCEPT.
    t.restore(table('-A KUBE-X -m comment --comment "x"y -j RETURN\n'), { noFlush: true });
    expect(t.hasRule('filter', 'KUBE-X', ['-m', 'comment', '--comment', 'x', 'y', '-j', 'RETURN'])).toBe(true);
  });

  it('refuses a line with a NUL byte, which iptables-restore would cut short', () => {
    const t = new InMemoryTables();
    expect(() => t.restore(table('-A KUBE-X -m comment --comment "a\0" -j DROP\n'), { noFlush: true })).toThrow(InMemoryRestoreError);
    expect(() => t.restore(table('-A KUBE-X -m comment --comment "a\0" -j DROP\n'), { noFlush: true })).toThrow(/line 3 failed: .*NUL/);
    expect(t.hasTable('filter')).toBe(false);
  });

  it('refuses a line longer than iptables-restore reads as one line', () => {
    const t = new InMemoryTables();
    const long = `-A KUBE-X -j RETURN${' '.repeat(10_300)}-A INPUT -j ACCEPT\n`;
    expect(() => t.restore(table(long), { noFlush: true })).toThrow(/read the part after 10238 as another line/);
    expect(t.rules('filter', 'INPUT')).toBeUndefined();
  });

  it('the dry-run iptables reports such a payload as a failed restore', async () => {
    const ipt = new DryRunIptables('IPv4');
    await expect(ipt.restore(table('-A KUBE-X -j DROP\0\n'), { noFlush: true, counters: true })).rejects.toMatchObject({ name: 'IptablesRestoreError', line: 3 });
  });

  it.each(HOSTILE_NAMES.map((h) => [h.label, h] as const))('%s: a rule added with it as an argument prints as one line that reads back the same, or is refused', (_label, h) => {
    const t = new InMemoryTables();
    t.ensureChain('filter', 'KUBE-X');
    const args = ['-m', 'comment', '--comment', `${h.namespace}/${h.name}:${h.port}`, '-j', 'RETURN'];
    let added = true;
    try {
      t.ensureRule('-A', 'filter', 'KUBE-X', args);
    } catch (err) {
      // Newlines, carriage returns and NUL cannot be carried by any iptables-restore line.
      expect(err).toBeInstanceOf(UnsafeRestoreTextError);
      expect(args[3]).toMatch(/[\n\r\0]/);
      added = false;
    }
    const saved = t.save('filter');
    const ruleLines = saved.split('\n').filter((l) => l.startsWith('-A '));
    expect(ruleLines).toHaveLength(added ? 1 : 0);
    expect(saved).not.toMatch(/^-A INPUT/m);
    if (added) {
      expect(tokenize(ruleLines[0] as string)).toEqual(['-A', 'KUBE-X', ...args]);
      const back = new InMemoryTables();
      back.restore(saved, { noFlush: false });
      expect(back.hasRule('filter', 'KUBE-X', args)).toBe(true);
    }
  });
});
