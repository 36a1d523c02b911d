import type { CommandResult, RunOptions } from './exec.js';
import type { SimulatedNode } from './topology.js';

/** The two iptables backends shipped by Debian's iptables 1.8.x. */
export type IptablesVariant = 'nft' | 'legacy';
export const IPTABLES_VARIANTS: readonly IptablesVariant[] = ['nft', 'legacy'];

type Tool = 'iptables' | 'iptables-save' | 'iptables-restore' | 'ip6tables' | 'ip6tables-save' | 'ip6tables-restore';

/** `iptables-save` + `nft` → `iptables-nft-save`. */
export function iptablesCommand(variant: IptablesVariant, tool: Tool): string {
  const [base, ...rest] = tool.split('-');
  return [base, variant, ...rest].join('-');
}

/** Runs `iptables-<variant>` (with `-w 5`) inside `ns`. */
export function iptables(
  node: SimulatedNode,
  ns: string,
  variant: IptablesVariant,
  args: readonly string[],
  opts?: RunOptions,
): Promise<CommandResult> {
  return node.exec(ns, iptablesCommand(variant, 'iptables'), ['-w', '5', ...args], opts);
}

/** `iptables-<variant>-save [-t table]` inside `ns`. */
export async function iptablesSave(node: SimulatedNode, ns: string, variant: IptablesVariant, table?: string, opts?: RunOptions): Promise<string> {
  const r = await node.exec(ns, iptablesCommand(variant, 'iptables-save'), table ? ['-t', table] : [], opts);
  return r.stdout;
}

/** `iptables-<variant>-restore -w 5 [--noflush]` of `rules` inside `ns`. */
export function iptablesRestore(
  node: SimulatedNode,
  ns: string,
  variant: IptablesVariant,
  rules: string,
  opts: RunOptions & { noflush?: boolean } = {},
): Promise<CommandResult> {
  const { noflush = true, ...runOpts } = opts;
  return node.exec(ns, iptablesCommand(variant, 'iptables-restore'), ['-w', '5', ...(noflush ? ['--noflush'] : [])], {
    ...runOpts,
    input: rules,
  });
}

/** Chain names declared in an `iptables-save` dump, per table: `{ nat: ['KUBE-SERVICES', ...] }`. */
export function chainsInDump(dump: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let table = '';
  for (const line of dump.split('\n')) {
    if (line.startsWith('*')) {
      table = line.slice(1).trim();
      out[table] ??= [];
    } else if (line.startsWith(':') && table) {
      const name = line.slice(1).split(/\s+/)[0];
      if (name) (out[table] ??= []).push(name);
    }
  }
  return out;
}

/** Every `KUBE-*` chain in a dump as `table/chain`, optionally ignoring some chain names. */
export function kubeChains(dump: string, ignore: readonly string[] = []): string[] {
  const res: string[] = [];
  for (const [table, chains] of Object.entries(chainsInDump(dump))) {
    for (const c of chains) if (c.startsWith('KUBE-') && !ignore.includes(c)) res.push(`${table}/${c}`);
  }
  return res;
}

/** `conntrack <args>` inside `ns`; never throws on rc 1 ("0 flow entries"). */
export function conntrack(node: SimulatedNode, ns: string, args: readonly string[]): Promise<CommandResult> {
  return node.exec(ns, 'conntrack', args, { allowFailure: true, timeoutMs: 10_000 });
}
