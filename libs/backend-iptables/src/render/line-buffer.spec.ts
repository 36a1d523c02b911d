import { JUMP_CHAINS, jumpRuleArgs, KUBELET_JUMP_CHAINS, isServiceChainName, makeChainLine } from './constants.js';
import { DiscardLineBuffer, LineBuffer, RenderBuffers } from './line-buffer.js';

describe('LineBuffer', () => {
  it('joins lines with newlines and counts them', () => {
    const b = new LineBuffer(8);
    expect(b.toString()).toBe('');
    b.write('-A X -j Y');
    b.writeArgs('-A', 'KUBE-SERVICES', ['-m', 'comment', '--comment', '"a b"'], '-j', 'Z');
    expect(b.lines).toBe(2);
    expect(b.toString()).toBe('-A X -j Y\n-A KUBE-SERVICES -m comment --comment "a b" -j Z\n');
    expect(b.bytes().toString('latin1')).toBe(b.toString());
    b.reset();
    expect(b.lines).toBe(0);
    expect(b.toString()).toBe('');
    b.write('again');
    expect(b.toString()).toBe('again\n');
  });

  it('grows past its initial size', () => {
    const b = new LineBuffer(4);
    const line = 'x'.repeat(1000);
    for (let i = 0; i < 100; i++) b.write(line);
    expect(b.length).toBe(100 * 1001);
    expect(b.toString()).toBe((line + '\n').repeat(100));
  });

  it('DiscardLineBuffer only counts', () => {
    const d = new DiscardLineBuffer();
    d.write('x');
    d.write('y');
    d.skip(3);
    expect(d.lines).toBe(5);
    d.reset();
    expect(d.lines).toBe(0);
  });

  it('RenderBuffers assembles the payload sections in upstream order', () => {
    const r = new RenderBuffers();
    r.filterChains.write(':A - [0:0]');
    r.filterRules.write('-A A -j ACCEPT');
    r.natChains.write(':B - [0:0]');
    r.natRules.write('-A B -j RETURN');
    expect(r.assemble().toString('latin1')).toBe('*filter\n:A - [0:0]\n-A A -j ACCEPT\nCOMMIT\n*nat\n:B - [0:0]\n-A B -j RETURN\nCOMMIT\n');
    r.reset();
    expect(r.assemble().toString('latin1')).toBe('*filter\nCOMMIT\n*nat\nCOMMIT\n');
  });

  it('reset keeps the chunks of a large render for reuse; release gives back all but the current one', () => {
    const b = new LineBuffer(16);
    for (let i = 0; i < 20; i++) b.write(`-A KUBE-SEP-${i} -j DNAT`);
    const grown = b.capacity;
    expect(grown).toBeGreaterThanOrEqual(b.length);
    b.reset();
    expect(b.capacity).toBe(grown);
    b.write('-A X -j Y');
    b.release();
    expect(b.length).toBe(0);
    expect(b.lines).toBe(0);
    expect(b.capacity).toBeLessThanOrEqual(32);
    b.write('-A X -j Y');
    expect(b.toString()).toBe('-A X -j Y\n');
  });

  it('RenderBuffers.release empties every section and makes earlier results stale', () => {
    const r = new RenderBuffers();
    for (let i = 0; i < 30_000; i++) r.natRules.write(`-A KUBE-SVC-${i} -m comment --comment "ns/svc-${i}:http" -j KUBE-SEP-${i}`);
    const gen = r.generation;
    const before = r.natRules.capacity;
    r.assemble();
    r.release();
    expect(() => r.assertCurrent(gen)).toThrow(/reused its buffers/);
    expect(before).toBeGreaterThan(1 << 20);
    expect(r.natRules.capacity).toBe(1 << 20);
    expect(r.assemble().toString('latin1')).toBe('*filter\nCOMMIT\n*nat\nCOMMIT\n');
  });
});

describe('constants', () => {
  it('makeChainLine', () => {
    expect(makeChainLine('KUBE-SERVICES')).toBe(':KUBE-SERVICES - [0:0]');
  });

  it('isServiceChainName', () => {
    for (const c of ['KUBE-SVC-X', 'KUBE-SVL-X', 'KUBE-SEP-X', 'KUBE-FW-X', 'KUBE-EXT-X']) expect(isServiceChainName(c)).toBe(true);
    for (const c of ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-MARK-MASQ', 'KUBE-FORWARD', 'KUBE-FIREWALL', 'KUBE-EXTERNAL-SERVICES', 'FOO'])
      expect(isServiceChainName(c)).toBe(false);
  });

  it('jump rule arguments as upstream ensures them', () => {
    expect(JUMP_CHAINS).toHaveLength(12);
    expect(jumpRuleArgs(JUMP_CHAINS[0])).toEqual([
      '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES',
    ]);
    const natPre = JUMP_CHAINS.find((j) => j.table === 'nat' && j.srcChain === 'PREROUTING')!;
    expect(jumpRuleArgs(natPre)).toEqual(['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']);
    expect(jumpRuleArgs(KUBELET_JUMP_CHAINS[0])).toEqual(['-j', 'KUBE-FIREWALL']);
    expect(jumpRuleArgs(KUBELET_JUMP_CHAINS[0], true)).toEqual(['-m', 'comment', '--comment', '', '-j', 'KUBE-FIREWALL']);
  });
});
