/** What the proxy sockets of one proxier have done, for logs, metrics and tests. */
export interface ProxyCounters {
  /** TCP connections accepted from clients. */
  tcpAccepted: number;
  /** TCP connections currently proxied (both sides open). */
  tcpActive: number;
  /** Connect attempts to an endpoint that failed or timed out (each one was retried elsewhere or given up). */
  endpointDialFailures: number;
  /** Client connections closed because no endpoint could be reached (or there was none). */
  tcpRejected: number;
  /** UDP client associations opened / currently open. */
  udpAssociationsOpened: number;
  udpAssociationsActive: number;
  /** UDP datagrams dropped: no endpoint, or the association's send queue was full. */
  udpDropped: number;
}

export function newProxyCounters(): ProxyCounters {
  return {
    tcpAccepted: 0,
    tcpActive: 0,
    endpointDialFailures: 0,
    tcpRejected: 0,
    udpAssociationsOpened: 0,
    udpAssociationsActive: 0,
    udpDropped: 0,
  };
}
