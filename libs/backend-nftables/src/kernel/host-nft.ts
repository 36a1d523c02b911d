import type { CommandExecutor } from '@kube-proxy/core';
import { TABLE_NAME, type NftFamily } from '../nft/nft-objects.js';
import type { NftTransaction } from '../nft/nft-transaction.js';
import { assertOneLine } from '../render/render-guards.js';
import { SERVICE_CONTAINERS, SET } from '../render/table-names.js';
import { ourElementsArgs, ourSetArgs, ourTableArgs } from './own-table-listing.js';
import { elementsFromJson, type KernelTableState } from './kernel-table-state.js';
import { parseOwnTableText } from './own-table-text.js';
import { NftRunError, type NftInterface } from './nft-interface.js';

/** A large cold-start transaction takes the kernel seconds; an nft stuck longer than this is killed. */
const RUN_TIMEOUT_MS = 10 * 60 * 1000;
const LIST_TIMEOUT_MS = 60 * 1000;
/**
 * Listing a whole table costs the kernel the square of its anonymous sets (each set's elements are
 * fetched by a name looked up among all the table's sets: 10,000 services take 10–60 s on a busy
 * 2-core machine). A restart that gave up would rebuild the table in one transaction, far slower.
 */
const TABLE_LIST_TIMEOUT_MS = 10 * 60 * 1000;

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
   * Reads what a restart needs, naming only our table (#136786: an older nft can crash parsing what
   * a newer nft wrote into other tables; `list chains ip` or `list sets ip` fetch every table of the
   * family): one terse text `list table` for the chains with their hooks and rules and the named
   * sets (terse: no set contents), then the elements of the shared sets and maps in JSON, one
   * `list set|map` each.
   */
  async readState(): Promise<KernelTableState | null> {
    // The shared containers are listed while nft and the kernel list the table (they cost little
    // beside it, and use the other core).
    const containers = [...SERVICE_CONTAINERS, SET.nodePortIPs].map((name) => {
      const kind = (Object.values(SET) as string[]).includes(name) ? 'set' : 'map';
      return { name, kind, listing: this.listOurs(ourElementsArgs(this.family, kind, name)) } as const;
    });
    const text = await this.listOurs(ourTableArgs(this.family), TABLE_LIST_TIMEOUT_MS).finally(() => Promise.allSettled(containers.map((c) => c.listing)));
    if (text === null) return null;
    const table = parseOwnTableText(text);
    if (!table.sets.has(SET.clusterIPs)) return null;
    const elements = new Map<string, ReadonlyMap<string, string>>();
    for (const { name, kind, listing } of containers) {
      const json = await listing;
      if (json !== null) elements.set(name, elementsFromJson(json, kind, this.family, TABLE_NAME));
    }
    return { chains: table.chains, sets: table.sets, elements, rules: table.rules };
  }

  /** stdout of `nft ARGS`; null when nft says the object is not there. */
  private async listOurs(args: readonly string[], timeoutMs = LIST_TIMEOUT_MS): Promise<string | null> {
    const result = await this.executor.run(this.binary, [...args], { timeoutMs });
    if (result.exitCode === 0) return result.stdout;
    if (result.spawnError === undefined && /No such file or directory/i.test(result.stderr)) return null;
    throw new NftRunError(`nft ${args.join(' ')} failed: ${describe(result)}`);
  }
}
