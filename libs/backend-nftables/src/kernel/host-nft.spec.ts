import { FakeCommandExecutor } from '@kube-proxy/core/testing';
import { NftTransaction } from '../nft/nft-transaction.js';
import { HostNft } from './host-nft.js';
import { NftRunError } from './nft-interface.js';

describe('HostNft', () => {
  it('runs a transaction as `nft -f -` with the text on stdin, never through a shell', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    const tx = new NftTransaction('ip').addTable().addChain('services');
    await new HostNft(exec, 'ip').run(tx);
    expect(exec.calls).toHaveLength(1);
    const call = exec.calls[0];
    expect(call.command).toBe('nft');
    expect(call.args).toEqual(['-f', '-']);
    const input = call.options.input as Uint8Array[];
    expect(Buffer.concat(input).toString()).toBe(tx.toString());
  });

  it('does not start nft for an empty transaction', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    await new HostNft(exec, 'ip').run(new NftTransaction('ip'));
    expect(exec.calls).toHaveLength(0);
  });

  it('reports the line nft names in its error', async () => {
    const exec = new FakeCommandExecutor().setDefault({
      exitCode: 1,
      stderr: '/dev/stdin:2:1-40: Error: Could not process rule: No such file or directory\nadd rule ip kube-proxy x goto y\n',
    });
    const err = await new HostNft(exec, 'ip').run(new NftTransaction('ip').addTable().addRule('x', 'goto y')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NftRunError);
    expect((err as NftRunError).line).toBe(2);
    expect((err as NftRunError).message).toMatch(/No such file or directory/);
  });

  it('finds the table by a terse listing of its own cluster-ips set, never a family-wide listing', async () => {
    const set = '{"nftables": [{"metainfo": {}}, {"set": {"family": "ip6", "name": "cluster-ips", "table": "kube-proxy", "type": "ipv6_addr"}}]}';
    const exec = new FakeCommandExecutor().on({ command: 'nft', args: ['-j', '-t', 'list', 'set', 'ip6', 'kube-proxy', 'cluster-ips'] }, { stdout: set });
    expect(await new HostNft(exec, 'ip6').tableExists()).toBe(true);
    const absent = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: No such file or directory\nlist set ip kube-proxy cluster-ips\n' });
    expect(await new HostNft(absent, 'ip').tableExists()).toBe(false);
    const failing = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: Operation not permitted' });
    await expect(new HostNft(failing, 'ip').tableExists()).rejects.toThrow(NftRunError);
  });

  it('reads a restart\'s state naming only its own table: one terse text `list table`, then one `list set|map` per shared container', async () => {
    const table = [
      'table ip kube-proxy {',
      '\tcomment "rules for kube-proxy"',
      '\tset cluster-ips {',
      '\t\ttype ipv4_addr',
      '\t\tcomment "Active ClusterIPs"',
      '\t}',
      '\tset affinity-x {',
      '\t\ttype ipv4_addr',
      '\t\tsize 65535',
      '\t\tflags dynamic,timeout',
      '\t\ttimeout 3h',
      '\t}',
      '\tchain nat-prerouting {',
      '\t\ttype nat hook prerouting priority dstnat; policy accept;',
      '\t\tjump services',
      '\t}',
      '\tchain service-ABC-ns/svc/tcp/p {',
      '\t\tmeta l4proto tcp dnat to 10.0.0.1:80',
      '\t}',
      '}',
    ].join('\n');
    const elements = '{"nftables": [{"metainfo": {}}, {"set": {"family": "ip", "name": "cluster-ips", "table": "kube-proxy", "elem": ["10.0.0.1"]}}]}';
    const exec = new FakeCommandExecutor()
      .on({ command: 'nft', args: ['-t', 'list', 'table', 'ip', 'kube-proxy'] }, { stdout: table })
      .on({ command: 'nft', args: ['-j', 'list', 'set', 'ip', 'kube-proxy', 'cluster-ips'] }, { stdout: elements })
      .setDefault({ exitCode: 1, stderr: 'Error: No such file or directory' });
    const state = await new HostNft(exec, 'ip').readState();
    expect(state?.chains).toEqual([{ name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100 } }, { name: 'service-ABC-ns/svc/tcp/p' }]);
    expect([...(state?.sets ?? [])]).toEqual([['cluster-ips', 0], ['affinity-x', 10800]]);
    expect([...(state?.elements.get('cluster-ips') ?? [])]).toEqual([['10.0.0.1', '10.0.0.1']]);
    expect([...(state?.rules ?? [])]).toEqual([['nat-prerouting', ['jump services']], ['service-ABC-ns/svc/tcp/p', ['meta l4proto tcp dnat to 10.0.0.1:80']]]);
    // hairpin-connections (v1.36+) is a set, the service containers otherwise maps
    expect(exec.calls.map((c) => c.args.join(' '))).toEqual(expect.arrayContaining(['-j list set ip kube-proxy hairpin-connections', '-j list map ip kube-proxy service-ips']));
    for (const call of exec.calls) {
      expect(call.args).toContain('list');
      // every listing names family and our table right after the object kind
      const kind = call.args.indexOf('list') + 1;
      expect(call.args.slice(kind + 1, kind + 3)).toEqual(['ip', 'kube-proxy']);
      expect(call.args).not.toEqual(expect.arrayContaining(['ruleset']));
      expect(['table', 'set', 'map']).toContain(call.args[kind]);
    }
    const absent = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: No such file or directory\nlist table ip kube-proxy\n' });
    expect(await new HostNft(absent, 'ip').readState()).toBeNull();
  });
});
