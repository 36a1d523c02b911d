import { DryRunRecorder, splitDryRunBlocks } from './dry-run-blocks.js';

describe('splitDryRunBlocks', () => {
  it('a single-stack run: the untagged block belongs to the one family; the last block wins', () => {
    const text = '# sync 1 full 2026-12-06T10:00:00.000Z\n*nat\nA\nCOMMIT\n# sync 2 partial 2026-12-06T10:00:01.000Z\n*nat\nB\nCOMMIT\n';
    expect(splitDryRunBlocks(text, ['IPv4'])).toEqual(new Map([['IPv4', '*nat\nB\nCOMMIT\n']]));
  });

  it('a dual-stack run: blocks tagged by family, each family its own rules', () => {
    const text = [
      '# sync 1 full 2026-12-06T10:00:00.000Z IPv4',
      'table ip kube-proxy {',
      '}',
      '# sync 1 userspace 2026-12-06T10:00:00.000Z IPv6',
      'table ip6 kube-proxy {',
      '}',
      '',
    ].join('\n');
    const blocks = splitDryRunBlocks(text, ['IPv4', 'IPv6']);
    expect(blocks.get('IPv4')).toBe('table ip kube-proxy {\n}');
    expect(blocks.get('IPv6')).toBe('table ip6 kube-proxy {\n}\n');
  });

  it('no block at all: nothing', () => {
    expect(splitDryRunBlocks('', ['IPv4']).size).toBe(0);
  });
});

describe('DryRunRecorder', () => {
  it('passes every piece on and keeps the last block of each family, header stripped', async () => {
    let out = '';
    let drains = 0;
    const drained = () => (drains++, Promise.resolve());
    const rec = new DryRunRecorder(['IPv4', 'IPv6']);
    const sink = rec.wrap({ write: (t) => void (out += t), drained });
    sink.write('# sync 1 full 2026-12-06T10:00:00.000Z IPv4\n');
    sink.write('*nat\n');
    sink.write('COMMIT\n');
    sink.write('# sync 1 full 2026-12-06T10:00:00.000Z IPv6\n*nat\nV6\nCOMMIT\n');
    await sink.drained!();
    expect(drains).toBe(1);
    expect(out).toContain('*nat\nV6');
    expect(rec.lastBlock('IPv4')).toBe('*nat\nCOMMIT\n');
    expect(rec.lastBlock('IPv6')).toBe('*nat\nV6\nCOMMIT\n');
    sink.write('# sync 2 partial 2026-12-06T10:00:01.000Z IPv4\n');
    sink.write('*nat\nNEW\nCOMMIT\n');
    expect(rec.lastBlock('IPv4')).toBe('*nat\nNEW\nCOMMIT\n');
    expect(rec.lastBlock('IPv6')).toBe('*nat\nV6\nCOMMIT\n');
  });

  it('untagged blocks belong to the run\'s one family; nothing before the first sync', () => {
    const rec = new DryRunRecorder(['IPv6']);
    expect(rec.lastBlock('IPv6')).toBeUndefined();
    const sink = rec.wrap({ write: () => undefined });
    sink.write('# sync 1 full 2026-12-06T10:00:00.000Z\n');
    sink.write('table ip6 kube-proxy {\n}\n');
    expect(rec.lastBlock('IPv6')).toBe('table ip6 kube-proxy {\n}\n');
  });
});
