import { spawnSync } from 'node:child_process';
import { ExecaCommandExecutor, type CommandExecutor } from '@kube-proxy/core';
import { NetnsExecutor } from './netns-executor.js';

/** The longest one nft load may take (a 10k-service single transaction takes the kernel about a minute). */
export const NFT_LOAD_LIMIT_MS = 10 * 60 * 1000;
const SHORT_MS = 60_000;

const host = new ExecaCommandExecutor();
/** Namespaces this process made and has not deleted yet: deleted by name if the bench is interrupted. */
const live = new Set<string>();

function deleteAllSync(): void {
  for (const name of live) spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore', timeout: 10_000 });
  live.clear();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deleteAllSync();
    process.exit(130);
  });
}

/**
 * A throwaway network namespace holding a kube-proxy nft table: the bench loads transactions into
 * it with the real nft and never touches the root namespace's rules.
 */
export class NftNamespace {
  /** Runs commands inside the namespace. */
  readonly executor: CommandExecutor;

  private constructor(readonly name: string) {
    this.executor = new NetnsExecutor(host, name);
  }

  static async create(name: string): Promise<NftNamespace> {
    const ns = new NftNamespace(name); // validates the name before anything runs
    await host.run('ip', ['netns', 'del', name], { timeoutMs: SHORT_MS }); // leftover of an interrupted run, by exact name
    const r = await host.run('ip', ['netns', 'add', name], { timeoutMs: SHORT_MS });
    if (r.exitCode !== 0) throw new Error(`ip netns add ${name}: ${r.spawnError ?? r.stderr.trim()}`);
    live.add(name);
    return ns;
  }

  /** `nft -f FILE` in the namespace; resolves with its wall time in ms. */
  async load(file: string): Promise<number> {
    const started = process.hrtime.bigint();
    const r = await this.executor.run('nft', ['-f', file], { timeoutMs: NFT_LOAD_LIMIT_MS, discardStdout: true });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (r.exitCode !== 0) throw new Error(`nft -f ${file} in ${this.name}: ${r.spawnError ?? r.stderr.trim().slice(0, 500)}`);
    return ms;
  }

  /** Entries of the service-ips map: one per ClusterIP port, so N when every service is in. */
  async serviceIpCount(): Promise<number> {
    const r = await this.executor.run('nft', ['list', 'map', 'ip', 'kube-proxy', 'service-ips'], { timeoutMs: SHORT_MS * 5 });
    if (r.exitCode !== 0) throw new Error(`nft list map in ${this.name}: ${r.spawnError ?? r.stderr.trim()}`);
    return r.stdout.split(': goto ').length - 1;
  }

  async destroy(): Promise<void> {
    await host.run('ip', ['netns', 'del', this.name], { timeoutMs: SHORT_MS });
    live.delete(this.name);
  }
}

/** Creates the namespace, runs `fn` with it, and deletes it whatever happens. */
export async function withNamespace<T>(name: string, fn: (ns: NftNamespace) => Promise<T>): Promise<T> {
  const ns = await NftNamespace.create(name);
  try {
    return await fn(ns);
  } finally {
    await ns.destroy();
  }
}
