/*
 * Stale conntrack entries of UDP (and SCTP) services after endpoint and service changes, as upstream's
 * pkg/proxy/conntrack: shared by every backend whose datapath is conntrack-based NAT (iptables, IPVS).
 */
export { ConntrackCleaner, endpointIP, NO_CONNECTION_TO_DELETE } from './conntrack-cleaner.js';
export type { ConntrackCleanerOptions } from './conntrack-cleaner.js';
