import { tokenize } from '../rule-text.js';
import { parseSavedRule } from './saved-rule.js';
import { parseIptablesSave, savedChain } from './saved-tables.js';

describe('parseSavedRule', () => {
  it('reads what iptables-save prints: addresses, ports, modules, the target and its options', () => {
    const rule = parseSavedRule(
      'nat',
      '-A KUBE-SEP-X -s 10.244.0.5/32 ! -d 10.0.0.0/8 -i eth0 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp --dport 53 -j DNAT --to-destination 10.244.0.5:53 --random',
    )!;
    expect(rule.chain).toBe('KUBE-SEP-X');
    expect(rule.comment).toBe('kube-system/kube-dns:dns');
    expect(rule.matches.map((m) => `${m.kind}${'negated' in m && m.negated ? '!' : ''}`)).toEqual(['source', 'destination!', 'in-interface', 'protocol', 'dport']);
    expect(rule.target).toEqual({ name: 'DNAT', goto: false, options: new Map([['--to-destination', '10.244.0.5:53'], ['--random', '']]) });
    expect(rule.unknown).toEqual([]);
  });

  it('tokenizes like iptables-restore: escapes inside quotes, a quote inside a word', () => {
    for (const line of [
      '-A KUBE-SERVICES -m comment --comment "ns/a \\"quoted\\" b:p cluster IP" -j KUBE-SVC-A',
      '-A KUBE-SERVICES -m comment --comment "" -j ACCEPT',
      '-A KUBE-SERVICES\t-p tcp  -j ACCEPT ',
    ]) {
      const rule = parseSavedRule('nat', line)!;
      const tokens = tokenize(line);
      const at = tokens.indexOf('--comment');
      if (at >= 0) expect(rule.comment).toBe(tokens[at + 1]);
      expect(rule.target?.name).toBe(tokens[tokens.indexOf('-j') + 1]);
    }
    // A quote inside a word goes to the full tokenizer (`ab"c d"e` is `abc d`, `e`); the bare `e`
    // then continues the comment, as an unquoted comment of upstream's fake dumps would.
    expect(parseSavedRule('nat', '-A KUBE-SERVICES -m comment --comment ab"c d"e -j ACCEPT')).toEqual(
      expect.objectContaining({ comment: 'abc d e', target: expect.objectContaining({ name: 'ACCEPT' }) }),
    );
    expect(parseSavedRule('nat', '-A KUBE-SERVICES -m comment --comment "ns/a \\"quoted\\" b:p cluster IP" -j KUBE-SVC-A')!.comment).toBe('ns/a "quoted" b:p cluster IP');
  });

  it('lists options it does not understand; an unterminated quote is no rule at all', () => {
    expect(parseSavedRule('filter', '-A KUBE-X -m limit --limit 5/sec -m owner ! --uid-owner 0 -j ACCEPT')!.unknown).toEqual(['--limit 5/sec', '! --uid-owner 0']);
    expect(parseSavedRule('filter', '-A KUBE-X -m comment --comment "open -j ACCEPT')).toBeUndefined();
    const tables = parseIptablesSave('*filter\n:KUBE-X - [0:0]\n-A KUBE-X -m comment --comment "open -j ACCEPT\nCOMMIT\n');
    const kept = savedChain(tables, 'filter', 'KUBE-X')!.rules[0]!;
    expect(kept.raw).toBe('-A KUBE-X -m comment --comment "open -j ACCEPT');
    expect(kept.unknown).toHaveLength(1);
  });

  it('reads marks, conntrack states, recent checks, statistic nth and physdev', () => {
    const rule = parseSavedRule(
      'nat',
      '-A KUBE-X -m mark ! --mark 0x4000/0x4000 -m conntrack --ctstate NEW,RELATED -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-A --mask 255.255.255.255 --rsource -m statistic --mode nth --every 3 --packet 0 -m physdev --physdev-is-in -j RETURN',
    )!;
    expect(rule.matches).toEqual([
      { kind: 'mark', negated: true, value: 0x4000, mask: 0x4000 },
      { kind: 'ctstate', negated: false, states: ['NEW', 'RELATED'] },
      { kind: 'history', negated: false, what: 'recent --rcheck' },
      { kind: 'physdev', negated: false, what: '--physdev-is-in' },
      { kind: 'statistic', probability: 1 / 3 },
    ]);
    expect(rule.unknown).toEqual([]);
  });
});
