import type { KernelObject } from '@kube-proxy/core';
import { formatHostPort, serviceOfPort, sortedEndpoints } from '@kube-proxy/core';
import type { SavedTables } from '@kube-proxy/netfilter-iptables';
import { parseDnatDestination, savedChain, servicePortOfComment } from '@kube-proxy/netfilter-iptables';

/** The per-Service-port chains kube-proxy writes (upstream's current and v1.28+ layouts, and older KUBE-XLB-). */
const SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW|SEP|XLB)-/;

/**
 * The chains that belong to Service `namespace/name` (found through the rule comments that name it
 * and the jumps from them), with their rule counts and the endpoints they send to; then, per shared
 * chain (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL …), how many of
 * its rules are the Service's.
 */
export function iptablesObjectsOf(tables: SavedTables, service: string): KernelObject[] {
  const owned = new Map<string, { table: string; chain: string }>();
  const shared = new Map<string, number>();
  const own = (table: string, chain: string): void => {
    if (savedChain(tables, table, chain) !== undefined) owned.set(`${table}/${chain}`, { table, chain });
  };
  for (const [tableName, table] of tables.tables) {
    for (const chain of table.chains.values()) {
      for (const rule of chain.rules) {
        const servicePort = servicePortOfComment(rule.comment);
        if (servicePort === undefined || serviceOfPort(servicePort) !== service) continue;
        if (SERVICE_CHAIN.test(chain.name)) own(tableName, chain.name);
        else shared.set(`${tableName}/${chain.name}`, (shared.get(`${tableName}/${chain.name}`) ?? 0) + 1);
        if (rule.target && SERVICE_CHAIN.test(rule.target.name)) own(tableName, rule.target.name);
      }
    }
  }
  addJumpedChains(tables, owned);
  const objects: KernelObject[] = [...owned.values()]
    .sort((a, b) => chainOrder(a.chain) - chainOrder(b.chain) || a.chain.localeCompare(b.chain))
    .map(({ table, chain }) => {
      const endpoints = endpointsOf(tables, table, chain);
      return { kind: 'chain', name: `${table}/${chain}`, rules: savedChain(tables, table, chain)?.rules.length ?? 0, ...(endpoints.length > 0 ? { endpoints } : {}) };
    });
  for (const [name, rules] of [...shared].sort(([a], [b]) => a.localeCompare(b))) objects.push({ kind: 'rules in shared chain', name, rules });
  return objects;
}

function chainOrder(chain: string): number {
  const order = ['KUBE-SVC-', 'KUBE-SVL-', 'KUBE-EXT-', 'KUBE-XLB-', 'KUBE-FW-', 'KUBE-SEP-'];
  const i = order.findIndex((p) => chain.startsWith(p));
  return i < 0 ? order.length : i;
}

/** The Service's chains jump only to its own chains: follow them (a SEP chain may carry no comment). */
function addJumpedChains(tables: SavedTables, owned: Map<string, { table: string; chain: string }>): void {
  const queue = [...owned.values()];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const rule of savedChain(tables, next.table, next.chain)?.rules ?? []) {
      const target = rule.target?.name;
      if (target === undefined || !SERVICE_CHAIN.test(target) || owned.has(`${next.table}/${target}`)) continue;
      if (savedChain(tables, next.table, target) === undefined) continue;
      const entry = { table: next.table, chain: target };
      owned.set(`${next.table}/${target}`, entry);
      queue.push(entry);
    }
  }
}

/** The DNAT destinations reachable from a chain through the Service's chains. */
function endpointsOf(tables: SavedTables, table: string, chain: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const rule of savedChain(tables, table, name)?.rules ?? []) {
      const target = rule.target;
      if (target?.name === 'DNAT') {
        const d = parseDnatDestination(target.options.get('--to-destination') ?? '', 0);
        if (d) found.push(d.port === 0 ? d.ip : formatHostPort(d.ip, d.port));
      } else if (target && SERVICE_CHAIN.test(target.name)) {
        visit(target.name);
      }
    }
  };
  visit(chain);
  return sortedEndpoints(found);
}
