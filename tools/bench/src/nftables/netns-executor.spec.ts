import { FakeCommandExecutor } from '@kube-proxy/core/testing';
import { NetnsExecutor, netnsArgs } from './netns-executor.js';

describe('NetnsExecutor', () => {
  it('runs `nft -f -` as `ip netns exec NS nft -f -`, passing stdin and options through unchanged', async () => {
    const inner = new FakeCommandExecutor().setDefault({ exitCode: 0, stdout: '', stderr: '' });
    const exec = new NetnsExecutor(inner, 'kpts-nfb-1');
    const input = [new TextEncoder().encode('add table ip kube-proxy\n')];
    await exec.run('nft', ['-f', '-'], { input, timeoutMs: 5000 });
    expect(inner.calls).toHaveLength(1);
    expect(inner.calls[0]!.command).toBe('ip');
    expect(inner.calls[0]!.args).toEqual(['netns', 'exec', 'kpts-nfb-1', 'nft', '-f', '-']);
    expect(inner.calls[0]!.options?.input).toBe(input);
    expect(inner.calls[0]!.options?.timeoutMs).toBe(5000);
  });

  it('keeps every argument a separate array element (nothing is joined for a shell)', () => {
    expect(netnsArgs('ns', 'nft', ['list', 'map', 'ip', 'kube-proxy', 'a b;c'])).toEqual(['netns', 'exec', 'ns', 'nft', 'list', 'map', 'ip', 'kube-proxy', 'a b;c']);
  });

  it('refuses a namespace name that could be read as an option or a path', () => {
    for (const bad of ['', '-all', 'a/b', 'x y', '../etc']) expect(() => new NetnsExecutor(new FakeCommandExecutor(), bad)).toThrow(/not a network namespace name/);
  });
});
