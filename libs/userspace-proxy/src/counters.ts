import type { ProxySocketStats } from '@kube-proxy/core';

/**
 * What the proxy sockets of one proxier have done: plain numbers the data path increments, read by
 * the metrics at scrape time (core's ProxySocketStats, writable).
 */
export type ProxyCounters = { -readonly [K in keyof ProxySocketStats]: number };

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
