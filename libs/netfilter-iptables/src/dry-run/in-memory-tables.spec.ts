import { InMemoryRestoreError, InMemoryTables } from './in-memory-tables.js';

// A full-sync payload in upstream's shape (pkg/proxy/iptables/proxier_test.go expectations).
const FULL_PAYLOAD = `*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.42 --dport 80 -j REJECT
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns2/svc2:p80 -> 10.180.0.2:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns2/svc2:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns2/svc2:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
COMMIT
`;

describe('InMemoryTables', () => {
  it('applies a full payload and prints it back in iptables-save form', () => {
    const t = new InMemoryTables();
    t.restore(FULL_PAYLOAD, { noFlush: true });
    const out = t.saveAll(['filter', 'nat']);
    // Tables in the order asked for; built-ins first, user chains sorted.
    expect(out.indexOf('*filter')).toBeLessThan(out.indexOf('*nat'));
    expect(t.saveAll().indexOf('*nat')).toBeLessThan(t.saveAll().indexOf('*filter'));
    expect(out).toContain(
      [
        '*filter',
        ':INPUT ACCEPT [0:0]',
        ':FORWARD ACCEPT [0:0]',
        ':OUTPUT ACCEPT [0:0]',
        ':KUBE-EXTERNAL-SERVICES - [0:0]',
        ':KUBE-FORWARD - [0:0]',
        ':KUBE-NODEPORTS - [0:0]',
        ':KUBE-PROXY-FIREWALL - [0:0]',
        ':KUBE-SERVICES - [0:0]',
        '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      ].join('\n'),
    );
    // The writer's spelling (quotes included) is kept.
    expect(out).toContain(
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.42 --dport 80 -j REJECT',
    );
    expect(out.endsWith('COMMIT\n')).toBe(true);
    expect(t.rules('nat', 'KUBE-SEP-SXIVWICOYRO3J4NJ')).toHaveLength(2);
  });

  it('restoreChunks gives the same tables as restore, wherever the chunks split the text', () => {
    const whole = new InMemoryTables();
    whole.restore(FULL_PAYLOAD, { noFlush: true });
    const bytes = Buffer.from(FULL_PAYLOAD, 'latin1');
    for (const size of [1, 7, 64, bytes.length]) {
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      const chunked = new InMemoryTables();
      chunked.restoreChunks(chunks, { noFlush: true });
      expect(chunked.saveAll()).toBe(whole.saveAll());
    }
  });

  it('restoreChunks blames the same line as restore', () => {
    const bad = '*nat\n:KUBE-X - [0:0]\n-A KUBE-X -j NOWHERE\nCOMMIT\n';
    const chunks = [Buffer.from(bad.slice(0, 20), 'latin1'), Buffer.from(bad.slice(20), 'latin1')];
    expect(() => new InMemoryTables().restoreChunks(chunks, { noFlush: true })).toThrow(expect.objectContaining({ line: 3 }));
    expect(() => new InMemoryTables().restoreChunks([Buffer.from('*nat\n')], { noFlush: true })).toThrow(expect.objectContaining({ line: 2 }));
  });

  it('savePieces gives the saveAll text in pieces that end at line ends', () => {
    const t = new InMemoryTables();
    t.restore(FULL_PAYLOAD, { noFlush: true });
    const pieces = [...t.savePieces(['filter', 'nat'], 100)];
    expect(pieces.length).toBeGreaterThan(3);
    for (const p of pieces) expect(p.endsWith('\n')).toBe(true);
    expect(pieces.join('')).toBe(t.saveAll(['filter', 'nat']));
  });

  it('with --noflush, a chain line flushes that chain and leaves other chains and built-in rules alone', () => {
    const t = new InMemoryTables();
    t.ensureChain('nat', 'KUBE-SERVICES');
    t.ensureRule('-I', 'nat', 'PREROUTING', ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']);
    t.ensureChain('nat', 'OTHER');
    t.ensureRule('-A', 'nat', 'OTHER', ['-j', 'RETURN']);
    t.restore(FULL_PAYLOAD, { noFlush: true });
    // A partial payload re-declares KUBE-SERVICES: its old rules go, the SVC chain not mentioned stays.
    t.restore(
      '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment "x" -j KUBE-SVC-XPGD46QRK7WJZT7O\nCOMMIT\n',
      { noFlush: true },
    );
    expect(t.rules('nat', 'KUBE-SERVICES')).toEqual(['-m comment --comment "x" -j KUBE-SVC-XPGD46QRK7WJZT7O']);
    expect(t.rules('nat', 'KUBE-SVC-XPGD46QRK7WJZT7O')).toHaveLength(2);
    expect(t.rules('nat', 'OTHER')).toEqual(['-j RETURN']);
    expect(t.rules('nat', 'PREROUTING')).toEqual(['-m comment --comment "kubernetes service portals" -j KUBE-SERVICES']);
  });

  it('without --noflush, a table block starts from an empty table', () => {
    const t = new InMemoryTables();
    t.restore(FULL_PAYLOAD, { noFlush: true });
    t.restore('*nat\n:KUBE-ONLY - [0:0]\nCOMMIT\n', { noFlush: false });
    expect(t.chains('nat')).toEqual(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING', 'KUBE-ONLY']);
    expect(t.chainExists('filter', 'KUBE-FORWARD')).toBe(true);
  });

  it('deletes a stale chain with the chain-line + -X idiom', () => {
    const t = new InMemoryTables();
    t.restore(FULL_PAYLOAD, { noFlush: true });
    t.restore(
      [
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]',
        ':KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]',
        '-X KUBE-SVC-XPGD46QRK7WJZT7O',
        '-X KUBE-SEP-SXIVWICOYRO3J4NJ',
        'COMMIT',
        '',
      ].join('\n'),
      { noFlush: true },
    );
    expect(t.chainExists('nat', 'KUBE-SVC-XPGD46QRK7WJZT7O')).toBe(false);
    expect(t.chainExists('nat', 'KUBE-SEP-SXIVWICOYRO3J4NJ')).toBe(false);
  });

  it('rejects what iptables rejects, naming the line, and keeps the previous state of that table', () => {
    const t = new InMemoryTables();
    t.restore(FULL_PAYLOAD, { noFlush: true });
    const before = t.saveAll();
    const cases: [string, number][] = [
      // rule in an undeclared chain
      ['*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-NOPE -j RETURN\nCOMMIT\n', 3],
      // jump to a chain that does not exist
      ['*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-SVC-MISSING\nCOMMIT\n', 3],
      // deleting a chain that is still referenced
      ['*nat\n:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]\n-X KUBE-SEP-SXIVWICOYRO3J4NJ\nCOMMIT\n', 3],
      // deleting a chain that still has rules
      ['*nat\n-X KUBE-MARK-MASQ\nCOMMIT\n', 2],
      // missing COMMIT
      ['*nat\n:KUBE-SERVICES - [0:0]\n', 3],
      // unterminated quote
      ['*nat\n-A KUBE-SERVICES -m comment --comment "oops -j RETURN\nCOMMIT\n', 2],
    ];
    for (const [payload, line] of cases) {
      let error: unknown;
      try {
        t.restore(payload, { noFlush: true });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InMemoryRestoreError);
      expect((error as InMemoryRestoreError).line).toBe(line);
      expect((error as Error).message).toMatch(new RegExp(`line ${line} failed`));
      expect(t.saveAll()).toBe(before);
    }
  });

  it('commits table by table: an earlier COMMIT stays when a later table fails', () => {
    const t = new InMemoryTables();
    expect(() =>
      t.restore('*filter\n:KUBE-A - [0:0]\nCOMMIT\n*nat\n-A KUBE-NOPE -j RETURN\nCOMMIT\n', { noFlush: true }),
    ).toThrow(InMemoryRestoreError);
    expect(t.chainExists('filter', 'KUBE-A')).toBe(true);
    expect(t.hasTable('nat')).toBe(false);
  });

  it('ensureChain / ensureRule / deleteRule are idempotent and match rules argument by argument', () => {
    const t = new InMemoryTables();
    expect(t.ensureChain('filter', 'KUBE-FORWARD')).toBe(false);
    expect(t.ensureChain('filter', 'KUBE-FORWARD')).toBe(true);
    const args = ['-m', 'comment', '--comment', 'kubernetes forwarding rules', '-j', 'KUBE-FORWARD'];
    t.ensureRule('-A', 'filter', 'FORWARD', ['-j', 'ACCEPT']);
    expect(t.ensureRule('-I', 'filter', 'FORWARD', args)).toBe(false);
    expect(t.ensureRule('-I', 'filter', 'FORWARD', args)).toBe(true);
    expect(t.rules('filter', 'FORWARD')).toEqual([
      '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
      '-j ACCEPT',
    ]);
    // The same rule written as restore text is the same rule.
    t.restore('*filter\n-D FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD\nCOMMIT\n', {
      noFlush: true,
    });
    expect(t.hasRule('filter', 'FORWARD', args)).toBe(false);
    expect(t.deleteRule('filter', 'FORWARD', args)).toBe(false);
    expect(t.referencesTo('filter', 'KUBE-FORWARD')).toEqual([]);
    t.deleteChain('filter', 'KUBE-FORWARD');
    expect(t.chainExists('filter', 'KUBE-FORWARD')).toBe(false);
  });

  it('loads real iptables-save output (comments, counters, escaped quotes)', () => {
    const save = [
      '# Generated by iptables-nft-save v1.8.9 (nf_tables) on Sun Nov 29 12:11:05 2026',
      '*nat',
      ':PREROUTING ACCEPT [10:600]',
      ':INPUT ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':POSTROUTING ACCEPT [0:0]',
      ':KUBE-SERVICES - [0:0]',
      ':CNI-XYZ - [0:0]',
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A POSTROUTING -m comment --comment "say \\"hi\\"" -j CNI-XYZ',
      '[5:300] -A CNI-XYZ -j MASQUERADE',
      'COMMIT',
      '# Completed on Sun Nov 29 12:11:05 2026',
    ].join('\n');
    const t = new InMemoryTables();
    t.restore(save, { noFlush: false, validateTargets: false });
    expect(t.referencesTo('nat', 'KUBE-SERVICES')).toEqual([{ chain: 'PREROUTING', index: 0 }]);
    expect(t.hasRule('nat', 'POSTROUTING', ['-m', 'comment', '--comment', 'say "hi"', '-j', 'CNI-XYZ'])).toBe(true);
    expect(t.rules('nat', 'CNI-XYZ')).toEqual(['-j MASQUERADE']);
  });
});
