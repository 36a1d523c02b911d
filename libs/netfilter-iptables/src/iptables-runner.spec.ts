import { nullLogger } from '@kube-proxy/core';
import { FakeCommandExecutor } from '@kube-proxy/core/testing';
import { extractLines, IptablesError, IptablesRestoreError, isNotFoundError, parseRestoreErrorLine } from './errors.js';
import { Iptables, iptablesBinaries } from './iptables-runner.js';

describe('iptablesBinaries', () => {
  it('names the binaries of each family and variant', () => {
    expect(iptablesBinaries('IPv4', 'nft')).toEqual({
      iptables: 'iptables-nft',
      save: 'iptables-nft-save',
      restore: 'iptables-nft-restore',
    });
    expect(iptablesBinaries('IPv6', 'legacy')).toEqual({
      iptables: 'ip6tables-legacy',
      save: 'ip6tables-legacy-save',
      restore: 'ip6tables-legacy-restore',
    });
  });
});

describe('Iptables', () => {
  function make(executor: FakeCommandExecutor, family: 'IPv4' | 'IPv6' = 'IPv4') {
    return new Iptables({ family, variant: 'nft', executor, logger: nullLogger });
  }

  it('restore runs iptables-restore -w 5 --noflush --counters with the payload on stdin', async () => {
    const exec = new FakeCommandExecutor().setDefault({});
    await make(exec).restore('*nat\nCOMMIT\n', { noFlush: true, counters: true });
    expect(exec.calls).toHaveLength(1);
    expect(exec.calls[0]).toMatchObject({
      command: 'iptables-nft-restore',
      args: ['-w', '5', '--noflush', '--counters'],
      options: { input: '*nat\nCOMMIT\n' },
    });
  });

  it('restoreChunks hands the chunks to the executor as they are (no joined copy)', async () => {
    const exec = new FakeCommandExecutor().setDefault({});
    const chunks = [Buffer.from('*nat\n'), Buffer.from('COMMIT\n')];
    await make(exec).restoreChunks(chunks, { noFlush: true, counters: true });
    expect(exec.calls[0]).toMatchObject({ command: 'iptables-nft-restore', args: ['-w', '5', '--noflush', '--counters'] });
    expect(exec.calls[0]!.options.input).toBe(chunks);
  });

  it('restoreChunks failures carry the line iptables blamed, as restore', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'iptables-restore: line 2 failed\n' });
    await expect(make(exec).restoreChunks([Buffer.from('*nat\n-A BAD\nCOMMIT\n')], { noFlush: true, counters: true })).rejects.toMatchObject({ line: 2 });
  });

  it('a whole-tables restore on iptables-nft opens each table with -S and discards its listing', async () => {
    const exec = new FakeCommandExecutor().setDefault({});
    await make(exec).restoreChunks([Buffer.from('*filter\nCOMMIT\n*nat\n:KUBE-X - [0:0]\nCOMMIT\n')], { noFlush: true, counters: true, wholeTables: true });
    const options = exec.calls[0]!.options;
    expect(Buffer.concat(options.input as Uint8Array[]).toString('latin1')).toBe('*filter\n-S\nCOMMIT\n*nat\n-S\n:KUBE-X - [0:0]\nCOMMIT\n');
    expect(options.discardStdout).toBe(true);
  });

  it('partial restores on iptables-nft and every restore on iptables-legacy go as written', async () => {
    const exec = new FakeCommandExecutor().setDefault({});
    await make(exec).restore('*nat\nCOMMIT\n', { noFlush: true, counters: true, wholeTables: false });
    const legacy = new Iptables({ family: 'IPv4', variant: 'legacy', executor: exec, logger: nullLogger });
    await legacy.restore('*nat\nCOMMIT\n', { noFlush: true, counters: true, wholeTables: true });
    expect(exec.calls.map((c) => c.options.input)).toEqual(['*nat\nCOMMIT\n', '*nat\nCOMMIT\n']);
    expect(exec.calls.map((c) => c.options.discardStdout)).toEqual([undefined, undefined]);
  });

  it('a hinted restore blames the line of the payload as written', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'iptables-nft-restore: line 7 failed\n' });
    // Hinted: *filter, -S, COMMIT, *nat, -S, :KUBE-X, -A KUBE-X -j NOWHERE (line 7) = line 5 as written.
    const payload = '*filter\nCOMMIT\n*nat\n:KUBE-X - [0:0]\n-A KUBE-X -j NOWHERE\nCOMMIT\n';
    await expect(make(exec).restore(payload, { noFlush: true, counters: true, wholeTables: true })).rejects.toMatchObject({ line: 5 });
  });

  it('restore failures carry the line iptables blamed', async () => {
    const exec = new FakeCommandExecutor().setDefault({
      exitCode: 1,
      stderr: 'iptables-restore: line 4 failed\n',
    });
    const err = await make(exec, 'IPv6')
      .restore('*nat\n:A - [0:0]\n-A A -j B\nCOMMIT\n', { noFlush: true, counters: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IptablesRestoreError);
    expect((err as IptablesRestoreError).line).toBe(4);
    expect(exec.calls[0]?.command).toBe('ip6tables-nft-restore');
  });

  it('saveTable runs iptables-save -t TABLE', async () => {
    const exec = new FakeCommandExecutor().on({ command: 'iptables-nft-save' }, { stdout: '*nat\nCOMMIT\n' });
    expect(await make(exec).saveTable('nat')).toBe('*nat\nCOMMIT\n');
    expect(exec.commandLines()).toEqual(['iptables-nft-save -t nat']);
  });

  it('ensureChain: -N; exit 1 means it existed', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'iptables: Chain already exists.' });
    expect(await make(exec).ensureChain('nat', 'KUBE-SERVICES')).toBe(true);
    expect(exec.commandLines()).toEqual(['iptables-nft -w 5 -N KUBE-SERVICES -t nat']);
    const fresh = new FakeCommandExecutor().setDefault({});
    expect(await make(fresh).ensureChain('nat', 'KUBE-SERVICES')).toBe(false);
    const broken = new FakeCommandExecutor().setDefault({ exitCode: 4, stderr: 'Another app is currently holding the xtables lock.' });
    await expect(make(broken).ensureChain('nat', 'KUBE-SERVICES')).rejects.toBeInstanceOf(IptablesError);
  });

  it('ensureRule checks with -C first and inserts only when missing', async () => {
    const args = ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'];
    const exec = new FakeCommandExecutor()
      .setDefault({})
      .on((c) => c.args.includes('-C'), { exitCode: 1, stderr: 'iptables: Bad rule (does a matching rule exist in that chain?).' });
    expect(await make(exec).ensureRule('-I', 'nat', 'PREROUTING', args)).toBe(false);
    expect(exec.calls.map((c) => c.args)).toEqual([
      ['-w', '5', '-C', 'PREROUTING', '-t', 'nat', ...args],
      ['-w', '5', '-I', 'PREROUTING', '-t', 'nat', ...args],
    ]);

    const present = new FakeCommandExecutor().setDefault({});
    expect(await make(present).ensureRule('-A', 'nat', 'PREROUTING', args)).toBe(true);
    expect(present.calls).toHaveLength(1);
  });

  it('deleteRule deletes only an existing rule', async () => {
    const missing = new FakeCommandExecutor().setDefault({ exitCode: 1 });
    await make(missing).deleteRule('filter', 'INPUT', ['-j', 'KUBE-FIREWALL']);
    expect(missing.calls.map((c) => c.args[2])).toEqual(['-C']);
    const present = new FakeCommandExecutor().setDefault({});
    await make(present).deleteRule('filter', 'INPUT', ['-j', 'KUBE-FIREWALL']);
    expect(present.calls.map((c) => c.args[2])).toEqual(['-C', '-D']);
  });

  it('chainExists uses -S; exit 1 is "no", other failures throw', async () => {
    const yes = new FakeCommandExecutor().setDefault({ stdout: '-N KUBE-PROXY-CANARY\n' });
    expect(await make(yes).chainExists('mangle', 'KUBE-PROXY-CANARY')).toBe(true);
    expect(yes.commandLines()).toEqual(['iptables-nft -w 5 -S KUBE-PROXY-CANARY -t mangle']);
    const no = new FakeCommandExecutor().setDefault({
      exitCode: 1,
      stderr: "iptables v1.8.9 (nf_tables): chain `KUBE-PROXY-CANARY' in table `mangle' is incompatible, use 'nft' tool.",
    });
    expect(await make(no).chainExists('mangle', 'KUBE-PROXY-CANARY')).toBe(false);
    const missingBinary = new FakeCommandExecutor();
    await expect(make(missingBinary).chainExists('mangle', 'KUBE-PROXY-CANARY')).rejects.toBeInstanceOf(IptablesError);
  });

  it('flushChain / deleteChain report failures', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'iptables: No chain/target/match by that name.' });
    const err = await make(exec).deleteChain('nat', 'KUBE-NOPE').catch((e: unknown) => e);
    expect(isNotFoundError(err)).toBe(true);
    await expect(make(exec).flushChain('nat', 'KUBE-NOPE')).rejects.toBeInstanceOf(IptablesError);
    expect(exec.commandLines()).toEqual([
      'iptables-nft -w 5 -X KUBE-NOPE -t nat',
      'iptables-nft -w 5 -F KUBE-NOPE -t nat',
    ]);
  });

  it('passes env and a command prefix through (netns tests)', async () => {
    const exec = new FakeCommandExecutor().setDefault({});
    const ipt = new Iptables({
      family: 'IPv4',
      variant: 'legacy',
      executor: exec,
      logger: nullLogger,
      env: { XTABLES_LOCKFILE: '/tmp/x.lock' },
      commandPrefix: ['ip', 'netns', 'exec', 'kp-test'],
    });
    await ipt.saveTable('filter');
    expect(exec.calls[0]).toMatchObject({
      command: 'ip',
      args: ['netns', 'exec', 'kp-test', 'iptables-legacy-save', '-t', 'filter'],
      options: { env: { XTABLES_LOCKFILE: '/tmp/x.lock' } },
    });
  });
});

describe('restore error parsing', () => {
  it('finds the line in the messages of both variants', () => {
    expect(parseRestoreErrorLine('iptables-restore: line 4 failed')).toBe(4);
    expect(parseRestoreErrorLine('iptables-nft-restore: line 12 failed: No chain/target/match by that name.')).toBe(12);
    expect(
      parseRestoreErrorLine(
        "iptables-restore v1.8.9 (legacy): Couldn't load target `KUBE-NOPE':No such file or directory\n\nError occurred at line: 3\n",
      ),
    ).toBe(3);
    expect(parseRestoreErrorLine('iptables-nft-restore: COMMIT expected at line 9')).toBe(9);
    expect(parseRestoreErrorLine('iptables-nft-restore v1.8.9 (nf_tables): \nline 2: CHAIN_DEL failed (Device or resource busy): chain KUBE-B')).toBe(2);
    expect(parseRestoreErrorLine('something else')).toBeUndefined();
  });

  it('extracts the failing line with 3 lines of context, clipped to the payload', () => {
    const payload = ['l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9'].join('\n') + '\n';
    expect(extractLines(payload, 5, 3).map((l) => l.line)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(extractLines(payload, 2, 3)).toEqual([
      { line: 1, text: 'l1' },
      { line: 2, text: 'l2' },
      { line: 3, text: 'l3' },
      { line: 4, text: 'l4' },
      { line: 5, text: 'l5' },
    ]);
    expect(extractLines(payload, 9, 3).map((l) => l.line)).toEqual([6, 7, 8, 9]);
    expect(extractLines(payload, 0, 3)).toEqual([]);
  });
});
