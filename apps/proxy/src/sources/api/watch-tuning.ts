/**
 * Two knobs of the informers' watches that upstream kube-proxy has no flag for, read from the
 * environment at the composition root: the server-side timeout each watch asks for
 * (`KUBE_PROXY_WATCH_TIMEOUT_SECONDS`; default 300–600 s at random, as client-go's reflector) and how
 * long past it a silent watch is given before the watchdog aborts and restarts it
 * (`KUBE_PROXY_WATCH_STALL_GRACE_SECONDS`; default 60 s). A silent watch is therefore noticed after
 * timeout + grace at the latest. The defaults are right for clusters; the fault e2e shortens both so
 * a stalled watch is caught within seconds. Invalid values are ignored (the defaults apply).
 */
import type { ApiSourceOptions } from './api-source.js';

export type WatchTuning = Pick<ApiSourceOptions, 'watchTimeoutSeconds' | 'watchStallGraceMs'>;

function positive(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export function watchTuningFromEnv(env: Readonly<Record<string, string | undefined>>): WatchTuning {
  const timeout = positive(env['KUBE_PROXY_WATCH_TIMEOUT_SECONDS']);
  const grace = positive(env['KUBE_PROXY_WATCH_STALL_GRACE_SECONDS']);
  return {
    ...(timeout !== undefined ? { watchTimeoutSeconds: () => Math.max(1, Math.round(timeout)) } : {}),
    ...(grace !== undefined ? { watchStallGraceMs: Math.round(grace * 1000) } : {}),
  };
}
