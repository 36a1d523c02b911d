import { cleanupPhases } from './cleanup-phases.js';

describe('cleanupPhases', () => {
  it('splits a --cleanup log into startup and each backend, from the lines\' own timestamps', () => {
    const spawnedAt = Date.UTC(2026, 11, 6, 8, 29, 12, 500);
    const log = [
      'I1206 08:29:12.728000 kube-proxy-ts v0.1.0',
      'I1206 08:29:14.169000 Detected host capabilities kernel="6.18"',
      'I1206 08:29:14.225000 Running iptables backend="iptables" command="iptables-nft-save"',
      'I1206 08:29:15.856000 Cleaned up backend mode="iptables"',
      'I1206 08:29:16.272000 Cleaned up backend mode="ipvs"',
      'E1206 08:29:16.300000 Cleanup failed mode="nftables"',
      'I1206 08:29:16.439000 Cleaned up backend mode="userspace"',
    ].join('\n');
    expect(cleanupPhases(log, spawnedAt)).toEqual({
      startupMs: 1669,
      backends: [
        { mode: 'iptables', ms: 1687 },
        { mode: 'ipvs', ms: 416 },
        { mode: 'userspace', ms: 167 },
      ],
    });
  });

  it('is undefined for a log without the host detection line', () => {
    expect(cleanupPhases('I1206 08:29:12.728000 kube-proxy-ts v0.1.0\n', Date.now())).toBeUndefined();
  });
});
