/*
 * Stale conntrack entries of UDP services after endpoint and service changes, as upstream's
 * pkg/proxy/conntrack: shared by every backend whose datapath is conntrack-based NAT (iptables,
 * nftables, IPVS). A proxier's first sync reconciles with the listed table, so a restart keeps the
 * flows that still reach a serving endpoint.
 */
export { ConntrackCleaner, endpointIP, NO_CONNECTION_TO_DELETE } from './conntrack-cleaner.js';
export type { ConntrackCleanerOptions } from './conntrack-cleaner.js';
