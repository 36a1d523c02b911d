import { readFileSync } from 'node:fs';
import { isNoRulesFound, type CommandExecutor, type CommandResult } from '@kube-proxy/core';
import { nftablesTracer } from './nftables-tracer.js';

/** Answers `nft list table <family> kube-proxy` from a map; records every call. */
function fakeExecutor(tables: Record<string, string>, calls: string[][]): CommandExecutor {
  return {
    async run(command: string, args: readonly string[]): Promise<CommandResult> {
      calls.push([command, ...args]);
      const family = args[2]!;
      const listing = tables[family];
      if (listing !== undefined) return { exitCode: 0, stdout: listing, stderr: '' };
      return { exitCode: 1, stdout: '', stderr: `Error: No such file or directory\nlist table ${family} kube-proxy\n                 ^^^^^^^^^^\n` };
    },
  };
}

const listing = readFileSync(new URL('./fixtures/examples.listing.nft', import.meta.url), 'utf8');

describe('nftables readLive', () => {
  it('reads only `nft list table ip kube-proxy` and traces what it holds', async () => {
    const calls: string[][] = [];
    const snapshot = await nftablesTracer.readLive(fakeExecutor({ ip: listing }, calls), 'IPv4');
    expect(calls).toEqual([['nft', 'list', 'table', 'ip', 'kube-proxy']]);
    if (isNoRulesFound(snapshot)) throw new Error('expected a snapshot');
    expect(snapshot).toMatchObject({ mode: 'nftables', family: 'IPv4', source: 'nft list table ip kube-proxy' });
    const t = nftablesTracer.trace(snapshot, { family: 'IPv4', protocol: 'UDP', sourceIP: '10.244.1.50', destIP: '10.96.0.53', destPort: 53, locallyGenerated: false }, { name: 'node-1', addresses: ['192.168.49.2'] });
    expect(t).toMatchObject({ verdict: 'DNAT', service: 'kube-system/kube-dns:dns', endpoints: ['10.244.1.2:53', '10.244.2.3:53'] });
  });

  it('reads the ip6 table for IPv6, and says what it looked for when there is none', async () => {
    const calls: string[][] = [];
    const result = await nftablesTracer.readLive(fakeExecutor({ ip: listing }, calls), 'IPv6');
    expect(calls).toEqual([['nft', 'list', 'table', 'ip6', 'kube-proxy']]);
    expect(result).toEqual({ found: false, lookedFor: 'table ip6 kube-proxy (nft list table ip6 kube-proxy)' });
  });

  it('reports an nft that cannot be run as nothing found, naming why', async () => {
    const executor: CommandExecutor = { run: async () => ({ exitCode: null, stdout: '', stderr: '', spawnError: 'spawn nft ENOENT' }) };
    const result = await nftablesTracer.readLive(executor, 'IPv4');
    expect(isNoRulesFound(result) && result.lookedFor).toBe('table ip kube-proxy (nft list table ip kube-proxy): nft could not be run: spawn nft ENOENT');
  });

  it('fails loudly on any other nft error rather than claiming the table is absent', async () => {
    const executor: CommandExecutor = { run: async () => ({ exitCode: 1, stdout: '', stderr: 'Error: Operation not permitted' }) };
    await expect(nftablesTracer.readLive(executor, 'IPv4')).rejects.toThrow(/Operation not permitted/);
  });
});
