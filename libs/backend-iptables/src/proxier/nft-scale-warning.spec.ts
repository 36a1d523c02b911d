import { RecordingLogger, TEST_HOST } from '@kube-proxy/core/testing';
import { NFT_LARGE_RESTORE_RULES, NFT_SLOW_RESTORE_MS, NftScaleWarning } from './nft-scale-warning.js';

describe('NftScaleWarning', () => {
  const warnings = (l: RecordingLogger) => l.entries.filter((e) => e.level === 'warn').map((e) => e.message);

  it('warns once, before the first restore too large for iptables-nft, naming iptables-legacy as the alternative', () => {
    const logger = new RecordingLogger();
    const w = new NftScaleWarning(TEST_HOST, false, logger);
    w.beforeRestore(NFT_LARGE_RESTORE_RULES);
    expect(warnings(logger)).toEqual([]);
    w.beforeRestore(510_022);
    w.beforeRestore(510_022);
    expect(warnings(logger)).toHaveLength(1);
    expect(warnings(logger)[0]).toMatch(/^iptables 1\.8\.9 \(nft\) loads large rulesets very slowly: this restore has 510022 rules/);
    expect(warnings(logger)[0]).toContain('iptables-legacy');
  });

  it('reports a slow restore once with the time it took', () => {
    const logger = new RecordingLogger();
    const w = new NftScaleWarning(TEST_HOST, false, logger);
    w.afterRestore(50_000, NFT_SLOW_RESTORE_MS - 1);
    w.afterRestore(50_000, 45_200);
    w.afterRestore(50_000, 60_000);
    expect(warnings(logger)).toEqual([expect.stringMatching(/^iptables-nft-restore took 45\.2 s for 50000 rules \(iptables 1\.8\.9\); use iptables-legacy/)]);
  });

  it('says nothing for iptables-legacy or in --dry-run', () => {
    const logger = new RecordingLogger();
    for (const w of [new NftScaleWarning({ ...TEST_HOST, iptablesVariant: 'legacy' }, false, logger), new NftScaleWarning(TEST_HOST, true, logger)]) {
      w.beforeRestore(1_000_000);
      w.afterRestore(1_000_000, 600_000);
    }
    expect(warnings(logger)).toEqual([]);
  });
});
