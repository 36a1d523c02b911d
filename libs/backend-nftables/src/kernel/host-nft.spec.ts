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

  it('finds the table by its cluster-ips set in a terse JSON listing (cheap at any table size)', async () => {
    const sets = (table: string) =>
      `{"nftables": [{"metainfo": {}}, {"set": {"family": "ip6", "name": "cluster-ips", "table": "${table}", "type": "ipv6_addr"}}]}`;
    const exec = new FakeCommandExecutor().on({ command: 'nft', args: ['-j', '-t', 'list', 'sets', 'ip6'] }, { stdout: sets('kube-proxy') });
    expect(await new HostNft(exec, 'ip6').tableExists()).toBe(true);
    const other = new FakeCommandExecutor().setDefault({ stdout: sets('kube-proxy-other') });
    expect(await new HostNft(other, 'ip6').tableExists()).toBe(false);
    const failing = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: Operation not permitted' });
    await expect(new HostNft(failing, 'ip').tableExists()).rejects.toThrow(NftRunError);
  });
});
