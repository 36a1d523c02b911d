import { parseSyncLine, SyncLineWatcher } from './sync-line-watcher.js';

describe('SyncLineWatcher', () => {
  const v4 = 'I1206 20:40:00.000000 1 syncing-proxier.ts] "SyncProxyRules complete" ipFamily="IPv4" elapsedMs=812 cpuMs=640.5\n';
  const v6 = 'I1206 20:40:00.000000 1 syncing-proxier.ts] "SyncProxyRules complete" ipFamily="IPv6" elapsedMs=3 cpuMs=1\n';

  it('reads wall and CPU of one family, whatever the chunking', async () => {
    let t = 100;
    const w = new SyncLineWatcher('IPv4', () => undefined, () => t++);
    const text = `noise\n${v6}${v4}`;
    for (let i = 0; i < text.length; i += 7) w.feed(text.slice(i, i + 7));
    expect(w.count()).toBe(1);
    expect(await w.firstWithin(100)).toMatchObject({ elapsedMs: 812, cpuMs: 640.5 });
  });

  it('ignores other lines and lines without figures', () => {
    expect(parseSyncLine('"Opened proxy port" ipFamily="IPv4"', 'IPv4', 0)).toBeUndefined();
    expect(parseSyncLine('"SyncProxyRules complete" ipFamily="IPv4"', 'IPv4', 0)).toBeUndefined();
    expect(parseSyncLine(v4.trim(), 'IPv6', 0)).toBeUndefined();
  });

  it('fails a wait as soon as the proxy is gone, with its log', async () => {
    const w = new SyncLineWatcher('IPv4', () => 'the proxy exited (1)');
    w.feed('fatal: something\n');
    await expect(w.next(0, 5000)).rejects.toThrow(/the proxy exited \(1\):\nfatal: something/);
  });
});
