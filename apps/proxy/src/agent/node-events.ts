/**
 * Warning events about this Node, for host setup that failed but did not stop the proxy (issue 5:
 * "a read-only /sys or a value the netns cannot change is a warning and an event, not a crash").
 * Fire-and-forget: an implementation logs a failure to post and never throws; callers do not wait.
 * The API source provides one that posts events.k8s.io/v1 Events (../sources/api/birth-cry.ts);
 * the manifest source and --dry-run use the no-op one (no writes to the cluster).
 */
export interface NodeEventRecorder {
  /** Records a Warning event regarding this Node. `reason` is UpperCamelCase, `note` human-readable. */
  warning(reason: string, note: string): void;
}

export const noopNodeEventRecorder: NodeEventRecorder = { warning: () => undefined };

/**
 * Upstream's reason for the one host-setup failure it reports as an event (the read-only sysfs when
 * growing the conntrack table: errReadOnlySysFS's text, in cmd/kube-proxy/app/conntrack.go). Used
 * here for every conntrack sysctl refused by a read-only filesystem or missing permission.
 */
export const REASON_READ_ONLY_SYSFS = 'readOnlySysFS';
/** Not upstream (it fails startup instead): any other conntrack sysctl write that failed. */
export const REASON_FAILED_TO_SET_CONNTRACK = 'FailedToSetConntrack';
/** Not upstream (it only logs at V(2)): oom_score_adj could not be applied. */
export const REASON_FAILED_TO_APPLY_OOM_SCORE_ADJ = 'FailedToApplyOOMScoreAdj';
