import { tokenize } from './rule-text.js';
import { COMMENT_MAX_LENGTH, commentText, EMPTY_COMMENT_TEXT, quotedCommentText } from '@kube-proxy/core';

/** The hostile names of issue 10 and their relatives. */
const HOSTILE: Record<string, string> = {
  'rule injection': 'default/evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#:x" -j ACCEPT #',
  'NUL byte': 'default/a\0b:p',
  tab: 'default/a\tb:p',
  'unclosed quote': 'default/"open:p',
  backslashes: 'default/a\\"b\\\\:p\\',
  'carriage return': 'default/a\rb:p',
  'non-ASCII': 'default/café-ünïcødé-名前-🚀:p',
  'latin1 alias of a newline (U+010A)': 'default/a\u010Ab:p',
  'line separator U+2028': 'default/a\u2028b:p',
  COMMIT: 'default/x\nCOMMIT\n*filter\n:INPUT DROP [0:0]\nCOMMIT\n:p',
  'percent sign': 'default/100%:p',
  'single quote and hash': "default/it's#1:p",
  'lone surrogate': 'default/\uD800:p',
};

const SAFE_TOKEN = /^[A-Za-z0-9._:/%-]+$/;

describe('commentText', () => {
  it('keeps valid Kubernetes names byte for byte', () => {
    const longest = `${'n'.repeat(63)}/${'s'.repeat(63)}:${'p'.repeat(15)}`;
    for (const name of ['default/kubernetes:https', 'ns1/svc1:p80', 'kube-system/kube-dns:dns-tcp', 'ns/name', 'a.b/c-d:e', longest]) {
      expect(commentText(name)).toBe(name);
    }
  });

  it.each(Object.entries(HOSTILE))('turns a name with %s into one safe ASCII token that decodes back', (_label, name) => {
    const out = commentText(name);
    expect(out).toMatch(SAFE_TOKEN);
    expect(out.length).toBeLessThanOrEqual(COMMENT_MAX_LENGTH);
    // Percent-encoding of the UTF-8 bytes: reversible (a lone surrogate decodes as U+FFFD).
    expect(decodeURIComponent(out)).toBe(Buffer.from(name, 'utf8').toString('utf8'));
  });

  it.each(Object.entries(HOSTILE))('stays one argument with %s, quoted and unquoted, on an iptables-restore line', (_label, name) => {
    expect(tokenize(`-A KUBE-NODEPORTS -m comment --comment ${commentText(name)} -m tcp -p tcp --dport 3001 -j KUBE-EXT-X`)).toEqual([
      '-A', 'KUBE-NODEPORTS', '-m', 'comment', '--comment', commentText(name), '-m', 'tcp', '-p', 'tcp', '--dport', '3001', '-j', 'KUBE-EXT-X',
    ]);
    expect(tokenize(`-A KUBE-SERVICES -m comment --comment "${commentText(name)} cluster IP" -j KUBE-SVC-X`)).toEqual([
      '-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', `${commentText(name)} cluster IP`, '-j', 'KUBE-SVC-X',
    ]);
  });

  it('encodes exactly the characters outside A-Z a-z 0-9 . _ - / :', () => {
    expect(commentText('a b"c\\d\ne\rf\tg\0h%i\'j#k!l*m')).toBe('a%20b%22c%5Cd%0Ae%0Df%09g%00h%25i%27j%23k%21l%2Am');
    expect(commentText('ABC.xyz_0-9/:')).toBe('ABC.xyz_0-9/:');
    expect(commentText('é')).toBe('%C3%A9');
  });

  it('cuts long text to maxLength, ending in "...", never inside an escape', () => {
    const long = 'x'.repeat(5000);
    expect(commentText(long)).toBe('x'.repeat(COMMENT_MAX_LENGTH - 3) + '...');
    expect(commentText(long, 199)).toHaveLength(199);
    // 10 characters of room: "a" then three-byte escapes that must not be split.
    const cut = commentText('a""""""', 10);
    expect(cut).toBe('a%22%22...'.slice(0, 10));
    expect(cut.length).toBeLessThanOrEqual(10);
    expect(cut.endsWith('...')).toBe(true);
    expect(cut.slice(0, -3)).not.toMatch(/%.?$/);
    // A valid name that does not fit is cut too.
    expect(commentText('ns/'.padEnd(300, 'a'), 50)).toHaveLength(50);
  });

  it('never returns an empty token, so an unquoted --comment always has its argument', () => {
    expect(commentText('')).toBe(EMPTY_COMMENT_TEXT);
    expect(tokenize(`--comment ${commentText('')} -j ACCEPT`)).toEqual(['--comment', EMPTY_COMMENT_TEXT, '-j', 'ACCEPT']);
  });

  it('rejects a maxLength with no room for the truncation mark', () => {
    expect(() => commentText('abc', 3)).toThrow(RangeError);
    expect(() => commentText('abc', 4.5)).toThrow(RangeError);
  });

  it('quotedCommentText is a complete --comment argument', () => {
    expect(quotedCommentText('default/evil" -j ACCEPT')).toBe('"default/evil%22%20-j%20ACCEPT"');
    expect(tokenize(`--comment ${quotedCommentText(HOSTILE['rule injection'] as string)} -j DROP`)).toHaveLength(4);
  });
});
