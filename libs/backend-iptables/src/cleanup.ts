import type { CommandExecutor, IPFamily, IptablesVariant, Logger } from '@kube-proxy/core';
import { InMemoryTables, Iptables, assertRestorePayload, iptablesBinaries, type IptablesInterface, type Table } from '@kube-proxy/core';
import {
  CLEANUP_ONLY_JUMP_CHAINS,
  isServiceChainName,
  JUMP_CHAINS,
  jumpRuleArgs,
  KUBE_CHAINS,
  KUBE_PROXY_CANARY_CHAIN,
  makeChainLine,
} from './render/index.js';

/**
 * The fixed chains this backend creates, by table (upstream's CleanupLeftovers list plus the ones it
 * leaves behind: KUBE-PROXY-FIREWALL, KUBE-MARK-MASQ and the canaries). KUBE-FIREWALL (kubelet's)
 * is never removed, as upstream.
 */
export const OWNED_CHAINS: Readonly<Record<Table, readonly string[]>> = {
  filter: [
    KUBE_CHAINS.SERVICES,
    KUBE_CHAINS.EXTERNAL_SERVICES,
    KUBE_CHAINS.FORWARD,
    KUBE_CHAINS.NODEPORTS,
    KUBE_CHAINS.PROXY_FIREWALL,
    KUBE_PROXY_CANARY_CHAIN,
  ],
  nat: [
    KUBE_CHAINS.SERVICES,
    KUBE_CHAINS.NODEPORTS,
    KUBE_CHAINS.POSTROUTING,
    KUBE_CHAINS.MARK_MASQ,
    KUBE_PROXY_CANARY_CHAIN,
  ],
  mangle: [KUBE_PROXY_CANARY_CHAIN],
};

const CLEANUP_TABLES: readonly Table[] = ['filter', 'nat', 'mangle'];

function parseSave(save: string): InMemoryTables {
  const model = new InMemoryTables();
  model.restore(save, { noFlush: false, validateTargets: false });
  return model;
}

/** Chains of `table` in `model` that this backend owns (fixed names, per-service chains in nat). */
export function ownedChainsIn(model: InMemoryTables, table: Table): string[] {
  const fixed = new Set(OWNED_CHAINS[table]);
  return model.chains(table).filter((c) => fixed.has(c) || (table === 'nat' && isServiceChainName(c)));
}

/**
 * Of the owned chains, those that can be deleted: the ones no rule outside the deleted set refers to.
 * A chain some foreign rule still jumps to (another tool's, or an older kube-proxy's jump with other
 * arguments) is left untouched, because iptables would refuse to delete it and fail the whole table.
 */
export function deletableChains(model: InMemoryTables, table: Table, owned: readonly string[]): {
  deletable: string[];
  kept: string[];
} {
  const ownedSet = new Set(owned);
  const kept = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const chain of owned) {
      if (kept.has(chain)) continue;
      const foreign = model
        .referencesTo(table, chain)
        .some((ref) => !ownedSet.has(ref.chain) || kept.has(ref.chain));
      if (foreign) {
        kept.add(chain);
        changed = true;
      }
    }
  }
  return { deletable: owned.filter((c) => !kept.has(c)), kept: [...kept] };
}

/**
 * Removes everything this backend programs from one family's iptables: the jump rules of JUMP_CHAINS
 * (and of cleanup-only jumps), then — in one iptables-restore per table — every owned chain
 * (flushed by its chain line, then `-X`). Upstream's CleanupLeftovers, extended to mangle (canary),
 * KUBE-PROXY-FIREWALL and KUBE-MARK-MASQ. Safe on a clean node: nothing is run for tables or chains
 * that iptables-save does not show. Returns true if an error was encountered (errors are logged).
 */
export async function cleanupIptables(ipt: IptablesInterface, logger: Logger): Promise<boolean> {
  let encounteredError = false;
  for (const table of CLEANUP_TABLES) {
    let model: InMemoryTables;
    try {
      model = parseSave(await ipt.saveTable(table));
    } catch (err) {
      logger.error('Failed to execute iptables-save', { iptables: ipt.description, table, error: String(err) });
      encounteredError = true;
      continue;
    }
    if (!model.hasTable(table)) continue;

    // Unlink our chains.
    let removedJumps = false;
    for (const jump of [...JUMP_CHAINS, ...CLEANUP_ONLY_JUMP_CHAINS]) {
      if (jump.table !== table) continue;
      if (!model.chainExists(table, jump.srcChain) || !model.chainExists(table, jump.dstChain)) continue;
      const args = jumpRuleArgs(jump, true);
      // Duplicates (e.g. from a crashed older proxy) are removed too.
      // (At least one attempt: deleteRule checks with -C, which matches iptables' own canonical form.)
      const copies = Math.max(1, countRule(model, table, jump.srcChain, args));
      for (let i = 0; i < copies; i++) {
        try {
          await ipt.deleteRule(table, jump.srcChain, args);
          removedJumps = true;
        } catch (err) {
          logger.error('Error removing pure-iptables proxy rule', {
            iptables: ipt.description,
            table,
            chain: jump.srcChain,
            error: String(err),
          });
          encounteredError = true;
          break;
        }
      }
    }
    if (removedJumps) {
      try {
        model = parseSave(await ipt.saveTable(table));
      } catch (err) {
        logger.error('Failed to execute iptables-save', { iptables: ipt.description, table, error: String(err) });
        encounteredError = true;
        continue;
      }
    }

    // Flush and remove all of our chains in this table.
    const owned = ownedChainsIn(model, table);
    if (owned.length === 0) continue;
    const { deletable, kept } = deletableChains(model, table, owned);
    for (const chain of kept) {
      logger.warn('Not deleting chain still referenced by rules kube-proxy does not own', {
        iptables: ipt.description,
        table,
        chain,
        referencedFrom: model.referencesTo(table, chain).map((r) => r.chain),
      });
    }
    if (deletable.length === 0) continue;
    const lines = [`*${table}`, ...deletable.map(makeChainLine), ...deletable.map((c) => `-X ${c}`), 'COMMIT', ''];
    try {
      // The chain names were read back from iptables-save: checked like every rendered payload, so a
      // name that would break the line is refused instead of written.
      assertRestorePayload(lines.join('\n'), lines.length - 1);
      await ipt.restore(lines.join('\n'), { noFlush: true, counters: true });
      logger.info('Removed iptables chains', { iptables: ipt.description, table, chains: deletable.length });
    } catch (err) {
      logger.error('Failed to execute iptables-restore', { iptables: ipt.description, table, error: String(err) });
      encounteredError = true;
    }
  }
  return encounteredError;
}

function countRule(model: InMemoryTables, table: Table, chain: string, args: readonly string[]): number {
  // The model can only tell whether one copy exists; count by deleting from a scratch copy.
  const scratch = parseSave(model.save(table));
  let n = 0;
  while (scratch.deleteRule(table, chain, args)) n++;
  return n;
}

/** Whether `binary --version` runs: the variant/family exists on this host. */
async function binaryWorks(executor: CommandExecutor, binary: string): Promise<boolean> {
  const result = await executor.run(binary, ['--version'], { timeoutMs: 10_000 });
  return result.exitCode === 0;
}

export interface CleanupAllOptions {
  readonly executor: CommandExecutor;
  readonly logger: Logger;
  readonly families?: readonly IPFamily[];
  readonly variants?: readonly IptablesVariant[];
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * `--cleanup` for the iptables backend: cleanupIptables for IPv4 and IPv6, with every iptables variant
 * (nft, legacy) whose binary exists on the host. Returns true if an error was encountered.
 */
export async function cleanupAllIptables(options: CleanupAllOptions): Promise<boolean> {
  const { executor, logger } = options;
  let encounteredError = false;
  for (const variant of options.variants ?? (['nft', 'legacy'] as const)) {
    for (const family of options.families ?? (['IPv4', 'IPv6'] as const)) {
      const binaries = iptablesBinaries(family, variant);
      if (!(await binaryWorks(executor, binaries.iptables))) {
        logger.debug('iptables variant not present; nothing to clean up', { binary: binaries.iptables });
        continue;
      }
      const ipt = new Iptables({
        family,
        variant,
        executor,
        logger,
        ...(options.env ? { env: options.env } : {}),
      });
      if (await cleanupIptables(ipt, logger)) encounteredError = true;
    }
  }
  return encounteredError;
}
