import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { joinArgs, quoteArg, tokenize } from './rule-text.js';

// Each expectation is what iptables 1.8.9's iptables-restore (nft and legacy) did with the same line,
// checked in a network namespace (see render-safety/comment-text.ts).
describe('tokenize (iptables-restore argument splitting)', () => {
  it('splits on spaces and tabs and groups quoted text', () => {
    expect(tokenize('-A X  -m comment\t--comment "a b"  -j ACCEPT')).toEqual(['-A', 'X', '-m', 'comment', '--comment', 'a b', '-j', 'ACCEPT']);
  });

  it('takes the character after a backslash literally inside quotes', () => {
    expect(tokenize('--comment "a\\"b\\\\c\\nd"')).toEqual(['--comment', 'a"b\\cnd']);
  });

  it('keeps a backslash outside quotes', () => {
    expect(tokenize('--comment a\\b')).toEqual(['--comment', 'a\\b']);
  });

  it('opens a quote in the middle of a word and ends the argument at the closing quote', () => {
    expect(tokenize('--comment ab"c d"e')).toEqual(['--comment', 'abc d', 'e']);
    expect(tokenize('--comment "a b"c')).toEqual(['--comment', 'a b', 'c']);
    expect(tokenize('--comment "" -j X')).toEqual(['--comment', '', '-j', 'X']);
  });

  it("treats single quotes, # and \\r as ordinary characters", () => {
    expect(tokenize("--comment 'c d'")).toEqual(['--comment', "'c", "d'"]);
    expect(tokenize('--comment a#b # x')).toEqual(['--comment', 'a#b', '#', 'x']);
    expect(tokenize('-j ACCEPT\r')).toEqual(['-j', 'ACCEPT\r']);
  });

  it('refuses an unclosed quote', () => {
    expect(() => tokenize('--comment "open -j ACCEPT')).toThrow(/unterminated/);
  });
});

describe('quoteArg / joinArgs', () => {
  it('quotes only what needs it, and round-trips through tokenize', () => {
    const args = ['-m', 'comment', '--comment', 'kubernetes service portals', '', 'a"b', 'c\\d', 'tab\there', 'ns/svc:port'];
    expect(joinArgs(args)).toBe('-m comment --comment "kubernetes service portals" "" "a\\"b" "c\\\\d" "tab\there" ns/svc:port');
    expect(tokenize(joinArgs(args))).toEqual(args);
  });

  it.each([
    ['a newline', 'a\n-A INPUT -j ACCEPT'],
    ['a carriage return', 'a\rb'],
    ['a NUL byte', 'a\0b'],
  ])('refuses an argument with %s, which no iptables-restore line can carry', (_label, arg) => {
    expect(() => quoteArg(arg)).toThrow(UnsafeRestoreTextError);
    expect(() => joinArgs(['-m', 'comment', '--comment', arg])).toThrow(/cannot be written on an iptables-restore line/);
  });
});
