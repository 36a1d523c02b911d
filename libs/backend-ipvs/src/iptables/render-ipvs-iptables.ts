/**
 * renderIpvsIptables: the iptables-restore payload of IPVS mode for one IP family (upstream
 * pkg/proxy/ipvs/proxier.go: createAndLinkKubeChain's chain lines + writeIptablesRules), pure.
 *
 *   *nat / `:CHAIN - [0:0]` for every owned nat chain / the nat rules / COMMIT
 *   *filter / `:CHAIN - [0:0]` for every owned filter chain / the filter rules / COMMIT
 *
 * Applied with `iptables-restore --noflush --counters` (upstream's NoFlushTables, RestoreCounters):
 * the declared chains are flushed and rewritten, nothing else in the tables is touched. The jumps
 * from the built-in chains are not in the payload (owned-chains.ts: IPVS_IPTABLES_JUMPS, ensured
 * one by one). The ipsets the rules match must exist before the restore (`ipset restore` of
 * renderIpsetRestore first), else iptables-restore fails.
 *
 * Where this differs from upstream on purpose (host inputs as options, sorted OUT-FILTER entries,
 * defence in depth) is listed in the backend's README.md, "Where we differ from upstream".
 */
import { assertRestorePayload, UnsafeRestoreTextError } from '@kube-proxy/core';
import type { DesiredIpvsState } from '../state/ipvs-state.js';
import { writeFilterRules } from './filter-rules.js';
import { assertRenderableDetector, type IpvsIptablesOptions } from './ipvs-iptables-options.js';
import { IpsetView } from './ipset-view.js';
import { masqueradeMark } from './masquerade-mark.js';
import { writeNatRules } from './nat-rules.js';
import { ownedChainsOf } from './owned-chains.js';
import { RuleLines } from './rule-lines.js';

function section(table: 'nat' | 'filter', rules: RuleLines): string[] {
  return [`*${table}`, ...ownedChainsOf(table).map((c) => `:${c} - [0:0]`), ...rules.lines, 'COMMIT'];
}

/** The payload and its size (upstream's metrics count rules per table in iptables mode only). */
export interface IpvsIptablesPayload {
  readonly payload: string;
  readonly natRules: number;
  readonly filterRules: number;
}

export function renderIpvsIptables(state: DesiredIpvsState, options: IpvsIptablesOptions): IpvsIptablesPayload {
  const family = state.family;
  if (family !== 'IPv4' && family !== 'IPv6') throw new UnsafeRestoreTextError(`ipvs state has no IP family (${JSON.stringify(String(family).slice(0, 20))})`);
  if (options.family !== family) throw new UnsafeRestoreTextError(`iptables skeleton for ${options.family} asked to render an ${family} state`);
  assertRenderableDetector(options.localDetector, family);
  const mark = masqueradeMark(options.masqueradeBit);
  const sets = new IpsetView(state);

  const nat = new RuleLines();
  writeNatRules(nat, { family, sets, mark, masqueradeAll: options.masqueradeAll, localDetector: options.localDetector, randomFully: options.randomFully });
  const filter = new RuleLines();
  writeFilterRules(filter, { family, sets, mark });

  const lines = [...section('nat', nat), ...section('filter', filter)];
  const payload = lines.join('\n') + '\n';
  assertRestorePayload(payload, lines.length);
  return { payload, natRules: nat.lines.length, filterRules: filter.lines.length };
}
