import { commentText } from '@kube-proxy/core';
import type { ServicePortProxy } from './socket-table.js';

export interface PortTableOptions {
  readonly listenIP: string;
  /** No --proxy-port-range: the ports shown are examples, the kernel picks at run time. */
  readonly examplePorts: boolean;
}

/**
 * The --dry-run table of proxy sockets, as `#` comment lines so the whole dry-run output stays valid
 * iptables-restore input. One line per socket: which traffic it serves and its endpoints. The
 * service port's name comes from the API, so it goes through core's commentText: a newline in it could
 * otherwise end the `#` line and forge a rule in the output (valid names are printed unchanged).
 */
export function formatPortTable(proxies: readonly ServicePortProxy[], options: PortTableOptions): string {
  const rows: string[][] = [['SERVICE-PORT', 'PROTOCOL', 'PROXY-PORT', 'SERVES', 'ENDPOINTS']];
  for (const proxy of proxies) {
    const serves = proxy.external === null ? 'all' : 'cluster-ip';
    rows.push(row(proxy, proxy.internal.port, serves, proxy.internal.endpoints.map((t) => t.key)));
    if (proxy.external !== null) {
      rows.push(row(proxy, proxy.external.port, 'external', proxy.external.endpoints.map((t) => t.key)));
    }
  }
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) => `# ${r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd());
  const note = options.examplePorts ? ' (example ports: without --proxy-port-range the kernel picks free ports at run time)' : '';
  return `# proxy sockets on ${options.listenIP}${note}\n${lines.join('\n')}\n`;
}

function row(proxy: ServicePortProxy, port: number, serves: string, endpoints: readonly string[]): string[] {
  return [commentText(proxy.key), proxy.protocol, String(port), serves, endpoints.length === 0 ? '(none)' : endpoints.join(',')];
}
