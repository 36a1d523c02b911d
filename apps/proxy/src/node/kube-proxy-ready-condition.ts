import type { IPFamily } from '@kube-proxy/core';

/**
 * The Node condition kube-proxy-ts publishes (issue 23 item 5b, upstream's open #75890): True once
 * the first full sync of every proxied family is in the kernel, False while syncs stay failed past
 * the healthz bound. A Node Readiness Controller rule (README, "Readiness signal") can keep a taint
 * on the Node until it is True, so pods do not land on a node without Service rules.
 */
export const KUBE_PROXY_READY = 'KubeProxyReady';

/** Reason of the True condition: every family's rules are programmed. */
export const REASON_RULES_PROGRAMMED = 'RulesProgrammed';
/** Reason of the False condition: a family has had a change unprogrammed for the healthz bound or longer. */
export const REASON_SYNC_FAILING = 'SyncFailing';

/** What the proxy wants the condition to say; times are the caller's (epoch ms). */
export interface ReadinessState {
  readonly ready: boolean;
  /** The families whose syncs are late (False only), sorted. */
  readonly failing: readonly IPFamily[];
  /** When each failing family last synced (epoch ms), as the health tracker records it. */
  readonly lastSynced?: Partial<Record<IPFamily, number>>;
}

/** A v1 NodeCondition as the API takes it in JSON (times as RFC 3339 strings). */
export interface NodeConditionJson {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastHeartbeatTime: string;
  readonly lastTransitionTime: string;
}

/** metav1.Time's JSON form: RFC 3339 in UTC with whole seconds (what the API server stores). */
export function metaTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The reason a state is published with. */
export function reasonOf(state: ReadinessState): string {
  return state.ready ? REASON_RULES_PROGRAMMED : REASON_SYNC_FAILING;
}

/**
 * The human-readable message: names the mode, the families and the time the state began (the
 * condition's lastTransitionTime), so it stays the same across heartbeats of one state.
 */
export function readinessMessage(opts: { mode: string; families: readonly IPFamily[]; state: ReadinessState; since: number; healthTimeoutMs: number }): string {
  const { mode, families, state, since, healthTimeoutMs } = opts;
  if (state.ready) {
    return `kube-proxy (${mode} mode) has programmed the Service rules of ${families.join(' and ')}; ready since ${metaTime(since)}`;
  }
  const detail = state.failing
    .map((f) => {
      const at = state.lastSynced?.[f];
      return at === undefined ? f : `${f} (last successful sync ${metaTime(at)})`;
    })
    .join(', ');
  return `kube-proxy (${mode} mode) has failed to program ${detail} for longer than the healthz bound of ${healthTimeoutMs / 1000}s; not ready since ${metaTime(since)}`;
}

/** The condition for `state`, as the status PATCH sends it. */
export function kubeProxyReadyCondition(opts: {
  state: ReadinessState;
  message: string;
  transitionAt: number;
  heartbeatAt: number;
}): NodeConditionJson {
  return {
    type: KUBE_PROXY_READY,
    status: opts.state.ready ? 'True' : 'False',
    reason: reasonOf(opts.state),
    message: opts.message,
    lastHeartbeatTime: metaTime(opts.heartbeatAt),
    lastTransitionTime: metaTime(opts.transitionAt),
  };
}

/**
 * The strategic merge patch of nodes/status that sets these conditions and no others: Node
 * `status.conditions` merge by `type` (patchMergeKey), so the kubelet's conditions and anyone
 * else's stay as they are, and the kubelet's own patches (a diff of the conditions it owns) leave
 * ours alone. node-problem-detector publishes its conditions the same way.
 */
export function conditionsPatch(conditions: readonly NodeConditionJson[]): { status: { conditions: NodeConditionJson[] } } {
  return { status: { conditions: [...conditions] } };
}
