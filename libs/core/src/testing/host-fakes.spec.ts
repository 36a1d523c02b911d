import { FakeCommandExecutor, FakeHostFs, FakeSysctl, RecordingLogger, commandNotFound } from './host-fakes.js';

describe('FakeCommandExecutor', () => {
  it('answers by rule (newest first), records calls, and treats unknown commands as not installed', async () => {
    const exec = new FakeCommandExecutor()
      .on({ command: 'iptables' }, { stdout: 'generic\n' })
      .on({ command: 'iptables', args: ['--version'] }, { stdout: 'iptables v1.8.9 (nf_tables)\n' })
      .on((c) => c.command === 'ipset' && c.options.input !== undefined, (c) => ({ stdout: `got ${c.options.input}` }));
    expect((await exec.run('iptables', ['--version'])).stdout).toBe('iptables v1.8.9 (nf_tables)\n');
    expect(await exec.run('iptables', ['-L'])).toEqual({ exitCode: 0, stdout: 'generic\n', stderr: '' });
    expect((await exec.run('ipset', ['restore'], { input: 'x' })).stdout).toBe('got x');
    expect(await exec.run('ipvsadm', ['-Ln'])).toEqual(commandNotFound('ipvsadm'));
    expect(exec.commandLines()).toEqual(['iptables --version', 'iptables -L', 'ipset restore', 'ipvsadm -Ln']);
    expect(exec.calls[2].options).toEqual({ input: 'x' });
  });

  it('uses setDefault for unmatched commands', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'nope' });
    expect(await exec.run('x', [])).toEqual({ exitCode: 1, stdout: '', stderr: 'nope' });
  });
});

describe('FakeSysctl', () => {
  it('stores values by normalised name, records writes, refuses unknown and read-only ones', async () => {
    const s = new FakeSysctl({ 'net.ipv4.ip_forward': '0', 'net/netfilter/nf_conntrack_max': '65536' }).makeReadOnly('net.netfilter.nf_conntrack_max');
    expect(await s.get('net/ipv4/ip_forward')).toBe('0');
    await s.set('net.ipv4.ip_forward', '1');
    expect(await s.get('net.ipv4.ip_forward')).toBe('1');
    expect(s.writes).toEqual([{ name: 'net/ipv4/ip_forward', value: '1' }]);
    await expect(s.set('net/netfilter/nf_conntrack_max', '1')).rejects.toThrow('EACCES');
    await expect(s.set('net/ipv4/nope', '1')).rejects.toThrow('ENOENT');
    expect(await s.get('net/ipv4/nope')).toBeUndefined();
  });
});

describe('FakeHostFs', () => {
  it('serves files, implied and named directories, and the kernel release', async () => {
    const fs = new FakeHostFs({ '/proc/net/ip_vs': 'IP Virtual Server' }, '5.15.0', ['/lib/modules/5.15.0']);
    expect(await fs.exists('/proc/net/ip_vs')).toBe(true);
    expect(await fs.exists('/proc/net')).toBe(true);
    expect(await fs.exists('/proc/net/')).toBe(true);
    expect(await fs.exists('/lib/modules/5.15.0')).toBe(true);
    expect(await fs.exists('/proc/modules')).toBe(false);
    expect((await fs.readFile('/proc/net/ip_vs'))?.toString()).toBe('IP Virtual Server');
    expect(fs.kernelRelease()).toBe('5.15.0');
    expect(fs.setKernelRelease('6.0').kernelRelease()).toBe('6.0');
  });
});

describe('RecordingLogger', () => {
  it('records entries with child fields, shared with the parent', () => {
    const log = new RecordingLogger();
    log.info('a', { x: 1 });
    log.child({ c: 'y' }).warn('b');
    expect(log.entries).toEqual([
      { level: 'info', message: 'a', meta: { x: 1 } },
      { level: 'warn', message: 'b', meta: { c: 'y' } },
    ]);
    expect(log.messages('warn')).toEqual(['b']);
    expect(log.has('info', 'a')).toBe(true);
    log.clear();
    expect(log.entries).toEqual([]);
  });
});
