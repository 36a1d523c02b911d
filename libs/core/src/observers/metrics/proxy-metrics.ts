import type { IPFamily } from '../../semantics/model/protocol.js';

export type SyncKind = 'full' | 'partial';
export type IptablesTable = 'filter' | 'nat';
/** The kinds of object a source validates before delivering them (the `kind` label of invalid_objects_total). */
export type InvalidObjectKind = 'Service' | 'EndpointSlice' | 'Node';

/**
 * Running totals of a userspace-mode proxier's sockets, read when metrics are scraped (so the data
 * path only increments plain numbers).
 */
export interface ProxySocketStats {
  /** TCP connections accepted from clients. */
  readonly tcpAccepted: number;
  /** TCP connections currently proxied. */
  readonly tcpActive: number;
  /** Connects to an endpoint that failed or timed out. */
  readonly endpointDialFailures: number;
  /** Client connections reset because no endpoint could be reached. */
  readonly tcpRejected: number;
  /** UDP client associations opened, and open now. */
  readonly udpAssociationsOpened: number;
  readonly udpAssociationsActive: number;
  /** UDP datagrams dropped (no endpoint, or queue full while connecting). */
  readonly udpDropped: number;
}

/**
 * The kubeproxy_* metrics a proxier reports (pkg/proxy/metrics). Backends call these; which metrics
 * are exported depends on the proxy mode, as upstream's RegisterMetrics(mode): calls for metrics the
 * mode does not export are accepted and ignored. Timestamps come from the implementation's clock.
 */
export interface ProxyMetrics {
  /** sync_proxy_rules_last_queued_timestamp_seconds: a sync was requested now. */
  syncQueued(family: IPFamily): void;
  /**
   * sync_proxy_rules_duration_seconds, plus sync_full_/sync_partial_proxy_rules_duration_seconds when
   * `kind` is given (iptables mode). Observed for every attempt, successful or not.
   */
  syncDuration(family: IPFamily, seconds: number, kind?: SyncKind): void;
  /** sync_proxy_rules_last_timestamp_seconds: the rules were successfully synced now. */
  syncSucceeded(family: IPFamily): void;
  /** network_programming_duration_seconds: one EndpointSlice change's trigger-to-programmed latency. */
  networkProgrammingLatency(family: IPFamily, seconds: number): void;
  /** sync_proxy_rules_no_local_endpoints_total{traffic_policy}: Local-policy services with no local endpoints. */
  noLocalEndpoints(family: IPFamily, counts: { readonly internal: number; readonly external: number }): void;

  /** sync_proxy_rules_service_changes_total: one Service event was processed. */
  serviceChangeSeen(): void;
  /** sync_proxy_rules_service_changes_pending */
  serviceChangesPending(count: number): void;
  /** sync_proxy_rules_endpoint_changes_total: one EndpointSlice event was processed. */
  endpointChangeSeen(): void;
  /** sync_proxy_rules_endpoint_changes_pending */
  endpointChangesPending(count: number): void;

  /**
   * sync_proxy_rules_iptables_restore_failures_total, and the partial_ one when `partial`.
   * @deprecated Kept for kube-proxy.backend/v1: updates the metric of that name if the mode's backend
   * defined it through MetricsRegistry (METRICS_REGISTRY); new backends use the handles it returns.
   */
  iptablesRestoreFailed(family: IPFamily, partial: boolean): void;
  /**
   * sync_proxy_rules_nftables_sync_failures_total: an nftables sync transaction failed.
   * @deprecated Kept for kube-proxy.backend/v1: updates the metric of that name if the mode's backend
   * defined it through MetricsRegistry (METRICS_REGISTRY); new backends use the handles it returns.
   */
  nftablesSyncFailed(family: IPFamily): void;
  /**
   * sync_proxy_rules_nftables_cleanup_failures_total: deleting stale nftables chains failed.
   * @deprecated Kept for kube-proxy.backend/v1: updates the metric of that name if the mode's backend
   * defined it through MetricsRegistry (METRICS_REGISTRY); new backends use the handles it returns.
   */
  nftablesCleanupFailed(family: IPFamily): void;
  /**
   * sync_proxy_rules_nftables_failed_services_total (kube-proxy-ts's own; upstream has none): nft
   * refused a transaction on a line of one service port, which was then left out of the retry.
   * Optional so that existing ProxyMetrics implementations stay valid.
   *
   * @deprecated Kept for kube-proxy.backend/v1: updates the metric of that name if the mode's backend
   * defined it through MetricsRegistry (METRICS_REGISTRY); new backends use the handles it returns.
   */
  nftablesServiceFailed?(family: IPFamily): void;
  /**
   * sync_proxy_rules_iptables_total (`total`: owned now) and _iptables_last (`last`: written by the last sync).
   * @deprecated Kept for kube-proxy.backend/v1: updates the metric of that name if the mode's backend
   * defined it through MetricsRegistry (METRICS_REGISTRY); new backends use the handles it returns.
   */
  iptablesRules(family: IPFamily, table: IptablesTable, counts: { readonly total: number; readonly last: number }): void;

  /** proxy_healthz_total{code} / proxy_livez_total{code}: one response of /healthz or /livez. */
  /** Userspace mode: export `read()`'s totals for `family` on every scrape. */
  proxySockets(family: IPFamily, read: () => ProxySocketStats): void;

  healthzResponse(code: number): void;
  livezResponse(code: number): void;

  /**
   * invalid_objects_total{kind} (kube-proxy-ts's own): one Service, EndpointSlice or Node was skipped
   * because it failed validation (see core's validateService & co.).
   */
  invalidObject(kind: InvalidObjectKind): void;

  /**
   * iptables mode: iptables_ct_state_invalid_dropped_packets_total and
   * iptables_localhost_nodeports_accepted_packets_total come from the kernel's nfacct counters, read
   * by `read` on every scrape (packet counts by counter name, see NFACCT_COUNTER_METRICS). A counter
   * `read` leaves out (not created, or unreadable) is not exported, as upstream's collector.
   */
  nfacctCounters(read: () => Promise<NfacctPacketCounts>): void;
}

/** Packet counts of nfacct counters by counter name (`ct_state_invalid_dropped_pkts`, …). */
export type NfacctPacketCounts = Readonly<Record<string, number | undefined>>;

/** The nfacct counters upstream's iptables proxier creates, and the metric (after `kubeproxy_`) each one feeds. */
export const NFACCT_COUNTER_METRICS: Readonly<Record<string, { readonly metric: string; readonly help: string }>> = {
  ct_state_invalid_dropped_pkts: {
    metric: 'iptables_ct_state_invalid_dropped_packets_total',
    help: 'packets dropped by iptables to work around conntrack problems',
  },
  localhost_nps_accepted_pkts: {
    metric: 'iptables_localhost_nodeports_accepted_packets_total',
    help: 'Number of packets accepted on nodeports of loopback interface',
  },
};

export const PROXY_METRICS = Symbol.for('kube-proxy.ProxyMetrics');
