/**
 * Test support: reads a rendered payload back the way upstream's proxier_test.go checks the fake
 * iptables (checkIptables with netlinktest.ExpectedIptablesChain): per chain, each rule's jump target
 * and the set it matches (`--match-set`), plus its `-s` source where upstream's expectation has one.
 * Upstream's fake looks a chain up by name across tables (nat first, then filter), and so does this.
 */
import { tokenize } from '@kube-proxy/netfilter-iptables';

export interface ChainRule {
  readonly jump: string;
  readonly matchSet: string;
  readonly source?: string;
}

/** Every `-A CHAIN …` rule of `chain` in `payload`, nat section first (upstream's GetRules(chain)). */
export function chainRules(payload: string, chain: string): ChainRule[] {
  const byTable = new Map<string, ChainRule[]>();
  let table = '';
  for (const line of payload.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    if (!line.startsWith(`-A ${chain} `)) continue;
    const t = tokenize(line);
    const at = (flag: string): string | undefined => {
      const i = t.indexOf(flag);
      return i < 0 ? undefined : t[i + 1];
    };
    // A positive `-s` only (upstream's SourceAddress); `! -s CIDR` is the local-traffic detector.
    const s = t.indexOf('-s');
    const source = s > 0 && t[s - 1] !== '!' ? t[s + 1] : undefined;
    const rule: ChainRule = { jump: at('-j') ?? '', matchSet: at('--match-set') ?? '', ...(source === undefined ? {} : { source }) };
    byTable.set(table, [...(byTable.get(table) ?? []), rule]);
  }
  return [...(byTable.get('nat') ?? []), ...(byTable.get('filter') ?? [])];
}

/** The lines of one table section (`*nat` … `COMMIT`) of `payload`. */
export function tableLines(payload: string, table: 'nat' | 'filter'): string[] {
  const lines = payload.split('\n');
  const start = lines.indexOf(`*${table}`);
  const end = lines.indexOf('COMMIT', start);
  return lines.slice(start, end + 1);
}
