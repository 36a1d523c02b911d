import type { IptablesVariant } from '@kube-proxy/core';
import { nullLogger } from '@kube-proxy/core';
import { FakeCommandExecutor, type RecordedCommand } from '@kube-proxy/core/testing';
import { IptablesError, isResourceError } from './errors.js';
import { Iptables } from './iptables-runner.js';
import type { RuleSpec } from './types.js';

const PREROUTING: RuleSpec = { chain: 'PREROUTING', args: ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] };
const OUTPUT: RuleSpec = { chain: 'OUTPUT', args: ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'] };
const MASQ: RuleSpec = { chain: 'KUBE-MARK-MASQ', args: ['-j', 'MARK', '--or-mark', '0x00004000'] };

/** An iptables-restore that holds `present` (payload lines as written) and answers -C lines like iptables 1.8. */
function fakeRestore(present: readonly string[], messages: 'legacy' | 'nft' = 'nft') {
  return (call: RecordedCommand) => {
    const lines = String(call.options.input ?? '').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (!line.startsWith('-C ')) continue;
      if (!present.includes(line)) {
        const tool = messages === 'nft' ? 'iptables-nft-restore' : 'iptables-restore';
        return { exitCode: 1, stderr: `${tool}: line ${i + 1} failed${messages === 'nft' ? ': Bad rule (does a matching rule exist in that chain?).' : ''}\n` };
      }
    }
    return { exitCode: 0 };
  };
}

function make(executor: FakeCommandExecutor, variant: IptablesVariant = 'nft') {
  return new Iptables({ family: 'IPv4', variant, executor, logger: nullLogger });
}

describe('Iptables.missingRules', () => {
  it('checks every rule of a table in one iptables-restore of -C lines (nft: no --test, which would skip the checks)', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    expect(await make(exec).missingRules('nat', [PREROUTING, OUTPUT, MASQ])).toEqual([]);
    expect(exec.calls).toHaveLength(1);
    expect(exec.calls[0]).toMatchObject({ command: 'iptables-nft-restore', args: ['-w', '5', '--noflush'] });
    expect(exec.calls[0]?.options.input).toBe(
      '*nat\n' +
        '-C PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n' +
        '-C OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n' +
        '-C KUBE-MARK-MASQ -j MARK --or-mark 0x00004000\n' +
        'COMMIT\n',
    );
  });

  it('legacy checks with --test, so nothing is ever committed', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    await make(exec, 'legacy').missingRules('filter', [{ chain: 'INPUT', args: ['-j', 'KUBE-FIREWALL'] }]);
    expect(exec.commandLines()).toEqual(['iptables-legacy-restore -w 5 --noflush --test']);
  });

  it('reports each missing rule: the blamed line is set aside and the rest checked again', async () => {
    for (const variant of ['nft', 'legacy'] as const) {
      const exec = new FakeCommandExecutor().on(
        { command: `iptables-${variant}-restore` },
        fakeRestore(['-C KUBE-MARK-MASQ -j MARK --or-mark 0x00004000'], variant),
      );
      expect(await make(exec, variant).missingRules('nat', [PREROUTING, OUTPUT, MASQ])).toEqual([PREROUTING, OUTPUT]);
      // Healthy rules cost nothing extra: one run per missing rule, then the passing one.
      expect(exec.calls).toHaveLength(3);
      expect(exec.calls[2]?.options.input).toBe('*nat\n-C KUBE-MARK-MASQ -j MARK --or-mark 0x00004000\nCOMMIT\n');
    }
  });

  it('a rule whose jump target chain is gone is missing (legacy and nft messages)', async () => {
    // The first run fails on the dangling jump; without it, the rest passes.
    const legacy = new FakeCommandExecutor().setDefault((call) =>
      String(call.options.input).includes('KUBE-SERVICES')
        ? { exitCode: 2, stderr: "iptables-restore v1.8.9 (legacy): Couldn't load target `KUBE-SERVICES':No such file or directory\n\nError occurred at line: 2\n" }
        : { exitCode: 0 },
    );
    expect(await make(legacy, 'legacy').missingRules('nat', [PREROUTING, MASQ])).toEqual([PREROUTING]);
    expect(legacy.calls).toHaveLength(2);
    const nft = new FakeCommandExecutor();
    let calls = 0;
    nft.setDefault(() =>
      calls++ === 0
        ? { exitCode: 2, stderr: "iptables-nft-restore v1.8.9 (nf_tables): Chain 'KUBE-SERVICES' does not exist\nError occurred at line: 4\n" }
        : { exitCode: 0 },
    );
    expect(await make(nft).missingRules('nat', [PREROUTING, OUTPUT, MASQ])).toEqual([PREROUTING, OUTPUT]);
    expect(nft.calls[1]?.options.input).toBe('*nat\n-C KUBE-MARK-MASQ -j MARK --or-mark 0x00004000\nCOMMIT\n');
  });

  it('throws when it cannot tell: lock contention, a rule iptables cannot parse', async () => {
    const locked = new FakeCommandExecutor().setDefault({
      exitCode: 4,
      stderr: 'Another app is currently holding the xtables lock. Stopped waiting after 5s.\n',
    });
    const err = await make(locked, 'legacy').missingRules('nat', [PREROUTING]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IptablesError);
    expect(isResourceError(err)).toBe(true);
    const badMatch = new FakeCommandExecutor().setDefault({
      exitCode: 2,
      stderr: "iptables-restore v1.8.9 (legacy): Couldn't load match `nosuchmatch':No such file or directory\n\nError occurred at line: 2\n",
    });
    await expect(make(badMatch, 'legacy').missingRules('nat', [PREROUTING])).rejects.toThrow(/could not check rules in table nat/);
  });

  it('asks nothing when there is nothing to check', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    expect(await make(exec).missingRules('nat', [])).toEqual([]);
    expect(exec.calls).toHaveLength(0);
  });
});
