import type { IPFamily } from '@kube-proxy/core';
import type { ProxyTarget } from '@kube-proxy/userspace-proxy';

/*
 * Messages between the proxier (main thread) and the data-plane worker. Sockets are named by an id
 * the main thread picks; counters live in shared memory (see shared-counters.ts), not in messages.
 */

export type ToDataPlane =
  | {
      readonly op: 'open';
      readonly id: number;
      readonly family: IPFamily;
      readonly protocol: 'TCP' | 'UDP';
      readonly host: string;
      readonly port: number;
      readonly endpoints: readonly ProxyTarget[];
      readonly affinitySeconds: number;
    }
  | { readonly op: 'update'; readonly id: number; readonly endpoints: readonly ProxyTarget[]; readonly affinitySeconds: number }
  | { readonly op: 'close'; readonly id: number };

export type FromDataPlane =
  | { readonly op: 'opened'; readonly id: number; readonly port: number }
  | { readonly op: 'openFailed'; readonly id: number; readonly code: string | undefined; readonly message: string }
  | { readonly op: 'log'; readonly level: 'error' | 'warn' | 'info' | 'verbose' | 'debug'; readonly message: string; readonly meta: Record<string, unknown> };

/** What the worker is started with (workerData). */
export interface DataPlaneConfig {
  readonly udpIdleTimeoutMs: number;
  /** Descriptors proxied connections may hold (see fd-budget.ts). */
  readonly fdBudget: number;
  /** One shared counter block per family (see shared-counters.ts). */
  readonly counters: Readonly<Partial<Record<IPFamily, SharedArrayBuffer>>>;
}
