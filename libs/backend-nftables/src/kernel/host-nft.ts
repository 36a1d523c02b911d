import type { CommandExecutor } from '@kube-proxy/core';
import { TABLE_NAME, type NftFamily } from '../nft/nft-objects.js';
import type { NftTransaction } from '../nft/nft-transaction.js';
import { assertOneLine } from '../render/render-guards.js';
import { SERVICE_CONTAINERS, SET } from '../render/table-names.js';
import { ourElementsArgs, ourSetArgs, ourTableArgs } from './own-table-listing.js';
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
   * Our table is there when its `cluster-ips` set is (every table we write declares it): a terse
   * listing of that one set, which nft answers without fetching any other table's objects.
   */
  async tableExists(): Promise<boolean> {
    return (await this.listOurs(ourSetArgs(this.family))) !== null;
  }

  /**
   * Reads what a restart needs, in JSON (nft's stable output), naming only our table (#136786: an
   * older nft can crash parsing what a newer nft wrote into other tables; `list chains ip` or
   * `list sets ip` fetch every table of the family): one terse `list table` for the chain names,
   * base-chain hooks and named sets (terse: no set contents, and no anonymous vmap of every service),
   * then the elements of the shared sets and maps, one `list set|map` each. The rules are ignored
   * (the table's chains are rewritten anyway).
   */
  async readState(): Promise<KernelTableState | null> {
    const table = await this.listOurs(ourTableArgs(this.family));
    if (table === null) return null;
    const sets = setsFromJson(table, this.family, TABLE_NAME);
    if (!sets.has(SET.clusterIPs)) return null;
    const chains = chainsFromJson(table, this.family, TABLE_NAME);
    const elements = new Map<string, ReadonlyMap<string, string>>();
    for (const name of [...SERVICE_CONTAINERS, SET.nodePortIPs]) {
      const kind = (Object.values(SET) as string[]).includes(name) ? 'set' : 'map';
      const text = await this.listOurs(ourElementsArgs(this.family, kind, name));
      if (text !== null) elements.set(name, elementsFromJson(text, kind, this.family, TABLE_NAME));
    }
    return { chains, sets, elements };
  }

  /** stdout of `nft ARGS`; null when nft says the object is not there. */
  private async listOurs(args: readonly string[]): Promise<string | null> {
    const result = await this.executor.run(this.binary, [...args], { timeoutMs: LIST_TIMEOUT_MS });
    if (result.exitCode === 0) return result.stdout;
    if (result.spawnError === undefined && /No such file or directory/i.test(result.stderr)) return null;
    throw new NftRunError(`nft ${args.join(' ')} failed: ${describe(result)}`);
  }
}
