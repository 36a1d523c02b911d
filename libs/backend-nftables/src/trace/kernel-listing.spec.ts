// A real-kernel check of the listing parser: tables (ours from examples/, upstream's v1.29 and v1.36+)
// are loaded into a network namespace this spec creates, read back with readLive (`nft list table`,
// through the CommandExecutor, inside the namespace), parsed and traced. Skipped, loudly, without
// root, `ip netns` or nft. Nothing outside the namespace is touched; it is deleted by its exact name.
import { readFileSync } from 'node:fs';
import { ExecaCommandExecutor, isNoRulesFound, type CommandExecutor, type CommandOptions, type RuleSnapshot } from '@kube-proxy/core';
import { nftablesTracer } from './nftables-tracer.js';
import { definitionsFirst } from './script-parser.js';

const NETNS = `kpnft${process.pid}`;
const host = new ExecaCommandExecutor();
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** Runs every command inside the namespace. */
const inNetns: CommandExecutor = {
  run: (command: string, args: readonly string[], options?: CommandOptions) => host.run('ip', ['netns', 'exec', NETNS, command, ...args], { timeoutMs: 20_000, ...options }),
};

async function usable(): Promise<string | undefined> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root';
  const nft = await host.run('nft', ['--version'], { timeoutMs: 10_000 });
  if (nft.exitCode !== 0) return `no nft (${nft.spawnError ?? nft.stderr.trim()})`;
  const add = await host.run('ip', ['netns', 'add', NETNS], { timeoutMs: 10_000 });
  return add.exitCode === 0 ? undefined : `ip netns add failed: ${add.spawnError ?? add.stderr.trim()}`;
}

async function load(script: string): Promise<void> {
  await inNetns.run('nft', ['delete', 'table', 'ip', 'kube-proxy']);
  const r = await inNetns.run('nft', ['-f', '-'], { input: definitionsFirst(script.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))).join('\n') });
  if (r.exitCode !== 0) throw new Error(`nft -f failed: ${r.stderr}`);
}

async function live(): Promise<RuleSnapshot> {
  const s = await nftablesTracer.readLive(inNetns, 'IPv4');
  if (isNoRulesFound(s)) throw new Error(`no table: ${s.lookedFor}`);
  return s;
}

let skip: string | undefined = 'not checked';

beforeAll(async () => {
  skip = await usable();
  if (skip !== undefined) console.warn(`SKIPPED: real-kernel nftables listing check: ${skip}`);
}, 30_000);

afterAll(async () => {
  if (skip === undefined) await host.run('ip', ['netns', 'del', NETNS], { timeoutMs: 10_000 });
}, 30_000);

const pkt = (sourceIP: string, destIP: string, destPort: number) => ({ family: 'IPv4' as const, protocol: 'TCP' as const, sourceIP, destIP, destPort, locallyGenerated: false });

describe('nftables tracer over a real kernel listing', () => {
  it('reports no table before anything is loaded, naming the command', async () => {
    if (skip !== undefined) return;
    expect(await nftablesTracer.readLive(inNetns, 'IPv4')).toEqual({ found: false, lookedFor: 'table ip kube-proxy (nft list table ip kube-proxy)' });
  }, 30_000);

  it('traces our examples/ table as the kernel lists it', async () => {
    if (skip !== undefined) return;
    await load(fixture('examples.dry-run.nft'));
    const s = await live();
    const node = { name: 'node-1', addresses: ['192.168.49.2'] };
    expect(nftablesTracer.trace(s, pkt('10.244.1.50', '10.96.0.10', 443), node)).toMatchObject({ verdict: 'DNAT', service: 'default/web:https', endpoints: ['10.244.1.11:8443', '10.244.1.12:8443', '10.244.2.21:8443'] });
    expect(nftablesTracer.trace(s, pkt('192.0.2.99', '203.0.113.10', 443), node)).toMatchObject({ verdict: 'DROP' });
  }, 30_000);

  it("traces upstream's v1.29 and v1.36+ tables as the kernel lists them", async () => {
    if (skip !== undefined) return;
    await load(fixture('upstream-v1.29.nft'));
    const node = { name: 'test-node', addresses: ['192.168.0.2'] };
    expect(nftablesTracer.trace(await live(), pkt('10.0.0.2', '172.30.0.44', 80), node)).toMatchObject({ verdict: 'DNAT', endpoints: ['10.180.0.4:80', '10.180.0.5:80'], masquerade: false });
    await load(fixture('upstream-v1.36.nft'));
    const t = nftablesTracer.trace(await live(), pkt('10.244.0.8', '10.100.192.23', 80), { name: 'pi', addresses: ['192.168.0.231'] });
    expect(t).toMatchObject({ verdict: 'DNAT', endpoints: ['10.244.0.10:9898', '10.244.0.8:9898'], masquerade: true });
  }, 60_000);

  it("traces upstream's verbatim v1.36+ TestOverallNFTablesRules table as the kernel lists it", async () => {
    if (skip !== undefined) return;
    // Upstream's dump names svc5's endpoint chain before adding it; loaded definitions first, as the tracer reads it.
    await load(fixture('upstream-v1.36-overall.nft'));
    const s = await live();
    const node = { name: 'test-node', addresses: ['192.168.0.2'] };
    expect(nftablesTracer.trace(s, pkt('10.0.0.2', '172.30.0.44', 80), node)).toMatchObject({ verdict: 'DNAT', service: 'ns4/svc4:p80', endpoints: ['10.180.0.4:80', '10.180.0.5:80'], masquerade: false });
    expect(nftablesTracer.trace(s, pkt('10.180.0.1', '172.30.0.41', 80), node)).toMatchObject({ verdict: 'DNAT', endpoints: ['10.180.0.1:80'], masquerade: true });
    expect(nftablesTracer.trace(s, pkt('203.0.113.2', '192.168.0.2', 3002), node)).toMatchObject({ verdict: 'DNAT', service: 'ns5/svc5:p80', endpoints: ['10.180.0.3:80'], masquerade: true });
    expect(nftablesTracer.trace(s, pkt('203.0.113.130', '5.6.7.8', 80), node)).toMatchObject({ verdict: 'DROP', service: 'ns5/svc5:p80' });
    expect(nftablesTracer.trace(s, pkt('10.0.0.2', '172.30.0.46', 80), node)).toMatchObject({ verdict: 'REJECT', service: 'ns6/svc6:p80' });
    const rules = [...nftablesTracer.trace(s, pkt('10.0.0.2', '172.30.0.44', 80), node).path].map((p) => p.rule);
    expect(rules).toContain('meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.180.0.4 . 80, 1 : 10.180.0.5 . 80 }');
  }, 60_000);
});
