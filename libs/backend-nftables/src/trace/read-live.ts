/*
 * `--live`: the kube-proxy table of one family, read with `nft list table ip kube-proxy` (ip6 for
 * IPv6) and nothing else — `nft list ruleset` would also print other programs' tables, and a newer
 * nft's output for those can crash an older nft that the node's tools were built with.
 */
import type { CommandExecutor, IPFamily, NoRulesFound } from '@kube-proxy/core';
import { TABLE_NAME } from '../nft/nft-objects.js';
import { parseNftListing } from './listing-parser.js';
import { nftFamilyOf, type NftSnapshot } from './nft-ruleset.js';

const LIST_TIMEOUT_MS = 60_000;

/** nft's answer for a table that is not there (1.0.x: "No such file or directory"). */
const ABSENT = /No such file or directory|does not exist/i;

export async function readLiveTable(executor: CommandExecutor, family: IPFamily): Promise<NftSnapshot | NoRulesFound> {
  const nftFamily = nftFamilyOf(family);
  const args = ['list', 'table', nftFamily, TABLE_NAME];
  const lookedFor = `table ${nftFamily} ${TABLE_NAME} (nft ${args.join(' ')})`;
  const result = await executor.run('nft', args, { timeoutMs: LIST_TIMEOUT_MS });
  if (result.spawnError !== undefined) return { found: false, lookedFor: `${lookedFor}: nft could not be run: ${result.spawnError}` };
  if (result.exitCode !== 0) {
    if (ABSENT.test(result.stderr)) return { found: false, lookedFor };
    throw new Error(`nft ${args.join(' ')} failed (exit ${result.exitCode}): ${result.stderr.trim()}`);
  }
  const ruleset = parseNftListing(result.stdout, nftFamily);
  return { mode: 'nftables', family, source: `nft ${args.join(' ')}`, ruleset };
}
