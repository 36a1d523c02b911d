import { payloadProblems, tokenizeRuleLine } from './payload-checks.js';

const wrap = (nat: string): string => `*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]\n${nat}COMMIT\n`;
const RULE = '-A KUBE-SERVICES -m comment --comment "ns/web:http cluster IP" -m tcp -p tcp -d 10.96.0.10 --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA\n';

describe('tokenizeRuleLine (iptables-restore argument splitting)', () => {
  it('splits on blanks, keeps quoted text whole and unescapes \\" inside quotes', () => {
    expect(tokenizeRuleLine('-A X -m comment --comment "a \\"b\\" c" -j Y').tokens.map((t) => t.text)).toEqual([
      '-A', 'X', '-m', 'comment', '--comment', 'a "b" c', '-j', 'Y',
    ]);
  });

  it('ends an argument at the closing quote and reports a quote left open', () => {
    expect(tokenizeRuleLine('--comment "a"b').tokens.map((t) => t.text)).toEqual(['--comment', 'a', 'b']);
    expect(tokenizeRuleLine('--comment "abc').openQuote).toBe(true);
  });
});

describe('payloadProblems', () => {
  it('accepts a well-formed payload', () => {
    expect(payloadProblems(wrap(RULE))).toEqual([]);
  });

  it.each([
    ['a NUL', wrap(RULE.replace('ns/web', 'ns/w\0eb')), /NUL/],
    ['a CR', wrap(RULE.replace('ns/web', 'ns/w\reb')), /CR/],
    ['a comment that does not close on its line', wrap(RULE.replace('cluster IP"', 'cluster\nIP"')), /quote not closed|not a chain/],
    ['a second target smuggled in through a comment', wrap(RULE.replace('"ns/web:http cluster IP"', '"ns/web" -j ACCEPT "x"')), /2 targets|not a plain token/],
    ['text outside the comment that is not a plain token', wrap(RULE.replace('--dport 80', '--dport 80;reboot')), /not a plain token/],
    ['a comment longer than xt_comment allows', wrap(RULE.replace('ns/web', 'x'.repeat(300))), /longer than 256/],
    ['a rule in an undeclared chain', wrap(RULE.replace('-A KUBE-SERVICES', '-A KUBE-NOPE')), /undeclared chain KUBE-NOPE/],
    ['a jump to an undeclared chain', wrap(RULE.replace('-j KUBE-SVC-AAAAAAAAAAAAAAAA', '-j KUBE-SVC-BBBBBBBBBBBBBBBB')), /jump to undeclared chain/],
    ['a missing COMMIT', wrap(RULE).replace('COMMIT\n', ''), /not committed/],
    ['a stray line', wrap(RULE).replace('COMMIT\n', 'hello\nCOMMIT\n'), /not a chain, rule or COMMIT line/],
  ])('reports %s', (_what, payload, problem) => {
    const problems = payloadProblems(payload);
    expect(problems.some((p) => problem.test(p))).toBe(true);
  });

  it('allows jumps to chains an earlier sync created in a partial payload', () => {
    expect(payloadProblems(wrap(RULE.replace('KUBE-SVC-AAAAAAAAAAAAAAAA\n', 'KUBE-SVC-BBBBBBBBBBBBBBBB\n')), { partial: true })).toEqual([]);
  });
});
