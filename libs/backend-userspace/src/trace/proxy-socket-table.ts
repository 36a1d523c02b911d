/**
 * The proxy-socket table our userspace --dry-run block opens with (proxier/port-table.ts), read
 * back: which proxy port serves which Service port and traffic class, and the endpoints it
 * forwards to. A running proxy's /debug/trace answers over the same block, so it knows the
 * endpoints; the kernel does not (they live in the proxy process).
 *
 *   # proxy sockets on 0.0.0.0 (example ports: …)
 *   # SERVICE-PORT          PROTOCOL  PROXY-PORT  SERVES      ENDPOINTS
 *   # default/web:http      TCP       32772       all         10.244.1.11:8080,10.244.1.12:8080
 *   # default/pending:http  TCP       32769       all         (none)
 */

export interface ProxySocketRow {
  /** The Service port as the table prints it (`ns/name:port`, `ns/name` for an unnamed port). */
  readonly servicePort: string;
  readonly protocol: 'TCP' | 'UDP';
  readonly proxyPort: number;
  /** `all`, `cluster-ip` or `external`. */
  readonly serves: string;
  /** `IP:PORT` / `[IPv6]:PORT` in round-robin order; null when unknown (read from the kernel). */
  readonly endpoints: readonly string[] | null;
  /** The row as printed. */
  readonly text: string;
}

export interface ProxySocketTable {
  /** The address the sockets listen on (`0.0.0.0` / `::` = every address). */
  readonly listenIP: string | undefined;
  readonly rows: readonly ProxySocketRow[];
}

const HEADER = /^# proxy sockets on (\S+)/;
const ROW = /^# (\S+)\s+(TCP|UDP)\s+(\d+)\s+(all|cluster-ip|external)\s+(\S+)$/;

export function parseProxySocketTable(text: string): ProxySocketTable {
  let listenIP: string | undefined;
  const rows: ProxySocketRow[] = [];
  for (const line of text.split('\n')) {
    const h = HEADER.exec(line);
    if (h !== null) {
      listenIP = h[1];
      continue;
    }
    const m = ROW.exec(line.trimEnd());
    if (m === null) continue;
    const [, servicePort, protocol, port, serves, eps] = m as unknown as [string, string, 'TCP' | 'UDP', string, string, string];
    rows.push({ servicePort, protocol, proxyPort: Number(port), serves, endpoints: eps === '(none)' ? [] : eps.split(','), text: line.slice(2).trimEnd() });
  }
  return { listenIP, rows };
}
