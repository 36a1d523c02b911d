import type { CommandExecutor } from '@kube-proxy/core';
import { TABLE_NAME, type NftFamily } from '../nft/nft-objects.js';
import type { NftTransaction } from '../nft/nft-transaction.js';
import { assertOneLine } from '../render/render-guards.js';
import { SERVICE_CONTAINERS, SET } from '../render/table-names.js';
import { chainsFromJson, elementsFromJson, setsFromJson, type KernelTableState } from './kernel-table-state.js';
import { NftRunError, type NftInterface } from './nft-interface.js';

/** A large cold-start transaction takes the kernel seconds; an nft stuck longer than this is killed. */
const RUN_TIMEOUT_MS = 10 * 60 * 1000;
const LIST_TIMEOUT_MS = 60 * 1000;

/** `/dev/stdin:12:1-30: Error: …` or `-:12:…`: the line nft names in its error. */
const ERROR_LINE = /^[^:\n]*:(\d+):\d+(?:-\d+)?: Error:/m;

function describe(result: { exitCode: number | null; stderr: string; stdout: string; spawnError?: string }): string {
  return result.spawnError ?? `exit ${String(result.exitCode)}: ${(result.stderr || result.stdout).trim()}`;
}

/**
 * The host's nft: each transaction is `nft -f -` with the text on stdin, in pieces (a cold start at
 * 10,000 services is ~30 MB; no joined copy is made). Only ever names the kube-proxy table.
 */
export class HostNft implements NftInterface {
  readonly description: string;

  constructor(
    private readonly executor: CommandExecutor,
    private readonly family: NftFamily,
    private readonly binary = 'nft',
  ) {
    this.description = `${binary} (table ${family} ${TABLE_NAME})`;
  }

  async run(tx: NftTransaction): Promise<void> {
    if (tx.size === 0) return;
    for (const line of tx.lines) assertOneLine(line);
    const encoder = new TextEncoder();
    const input: Uint8Array[] = [];
    for (const piece of tx.pieces()) input.push(encoder.encode(piece));
    const result = await this.executor.run(this.binary, ['-f', '-'], { input, timeoutMs: RUN_TIMEOUT_MS, discardStdout: true });
    if (result.exitCode === 0) return;
    const match = ERROR_LINE.exec(result.stderr);
    throw new NftRunError(`nft -f - failed: ${describe(result)}`, match ? Number(match[1]) : undefined);
  }

  /**
   * Our table is there when its `cluster-ips` set is (every table we write declares it). Found
   * with a terse listing of the family's sets: ~40 ms at 10,000 services, where nft 1.0.6 takes
   * ~5 s for `list tables` (it fetches the whole ruleset first).
   */
  async tableExists(): Promise<boolean> {
    return (await this.namedSets()) !== null;
  }

  /** Named sets of our table with their timeouts; null when the table (its cluster-ips set) is absent. */
  private async namedSets(): Promise<Map<string, number> | null> {
    const result = await this.executor.run(this.binary, ['-j', '-t', 'list', 'sets', this.family], { timeoutMs: LIST_TIMEOUT_MS });
    if (result.exitCode !== 0) throw new NftRunError(`nft -j -t list sets failed: ${describe(result)}`);
    const sets = setsFromJson(result.stdout, this.family, TABLE_NAME);
    return sets.has(SET.clusterIPs) ? sets : null;
  }

  /**
   * Reads what a restart needs, in JSON (nft's stable output): chain names and base-chain hooks,
   * named sets (terse: without -t nft also dumps every service's anonymous vmap, one request per
   * set, 3 s at 10,000 services instead of 40 ms), and the elements of the shared sets and maps.
   * At 10,000 services: ~0.5 s for the chains, ~0.2 s for the elements; the rules are never read
   * (the table's chains are rewritten anyway).
   */
  async readState(): Promise<KernelTableState | null> {
    const sets = await this.namedSets();
    if (sets === null) return null;
    const json = async (args: string[]): Promise<string | null> => {
      const result = await this.executor.run(this.binary, ['-j', ...args], { timeoutMs: LIST_TIMEOUT_MS });
      if (result.exitCode === 0) return result.stdout;
      if (/No such file or directory/i.test(result.stderr)) return null;
      throw new NftRunError(`nft -j ${args.join(' ')} failed: ${describe(result)}`);
    };
    const chains = chainsFromJson((await json(['list', 'chains', this.family])) ?? '{}', this.family, TABLE_NAME);
    const elements = new Map<string, ReadonlyMap<string, string>>();
    for (const name of [...SERVICE_CONTAINERS, SET.nodePortIPs]) {
      const kind = name === SET.clusterIPs || name === SET.nodePortIPs ? 'set' : 'map';
      const text = await json(['list', kind, this.family, TABLE_NAME, name]);
      if (text !== null) elements.set(name, elementsFromJson(text, kind, this.family, TABLE_NAME));
    }
    return { chains, sets, elements };
  }
}
