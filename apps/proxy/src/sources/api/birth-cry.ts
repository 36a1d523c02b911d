import { hostname as osHostname } from 'node:os';
import type { Logger } from '@kube-proxy/core';
import type { KubeApi } from './kube-api.js';

const REPORTING_CONTROLLER = 'kube-proxy';
const EVENTS_PATH = '/apis/events.k8s.io/v1/namespaces/default/events';
/** events.k8s.io/v1 rejects a note longer than 1 kB. */
const MAX_NOTE_LENGTH = 1024;

/** metav1.MicroTime's JSON form: RFC 3339 with exactly six fractional digits (the API server insists). */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface NodeEventSpec {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly action: string;
  readonly note: string;
}

/**
 * An events.k8s.io/v1 Event regarding the Node (whose reference, as upstream, uses the node name as
 * UID), in namespace "default", named `<node>.<hex unix nanos>` like client-go's event recorder.
 * `nanos` defaults to `now` in nanoseconds; a recorder posting several events within one millisecond
 * passes distinct values so the names do not collide.
 */
export function nodeEvent(
  nodeName: string,
  spec: NodeEventSpec,
  now: Date = new Date(),
  hostname: string = osHostname(),
  nanos: bigint = BigInt(now.getTime()) * 1_000_000n,
): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${nodeName}.${nanos.toString(16)}`, namespace: 'default' },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: `${REPORTING_CONTROLLER}-${hostname}`.slice(0, 128),
    action: spec.action,
    reason: spec.reason,
    // events.k8s.io/v1 `note` is omitempty: an empty note is not sent at all, as client-go does.
    ...(spec.note === '' ? {} : { note: spec.note.length > MAX_NOTE_LENGTH ? `${spec.note.slice(0, MAX_NOTE_LENGTH - 3)}...` : spec.note }),
    type: spec.type,
    regarding: { kind: 'Node', name: nodeName, uid: nodeName },
  };
}

/**
 * The event upstream's birthCry records (`Recorder.Eventf(nodeRef, nil, Normal, "Starting",
 * "StartKubeProxy", "")`): type Normal, reason Starting, action StartKubeProxy, no note, regarding
 * the Node.
 */
export function startingEvent(nodeName: string, now: Date = new Date(), hostname: string = osHostname()): Record<string, unknown> {
  return nodeEvent(nodeName, { type: 'Normal', reason: 'Starting', action: 'StartKubeProxy', note: '' }, now, hostname);
}

/**
 * Posts an event (from nodeEvent). An event is informational: any failure is logged (as "Could not
 * post the <what> event; continuing") and swallowed, never thrown. Resolves true when the API server
 * accepted it; false on failure or once `signal` has aborted.
 */
export async function postNodeEvent(
  api: Pick<KubeApi, 'request'>,
  event: Record<string, unknown>,
  what: string,
  logger: Logger,
  signal?: AbortSignal,
): Promise<boolean> {
  const node = (event['regarding'] as { name?: string } | undefined)?.name;
  try {
    await api.request('POST', EVENTS_PATH, { body: event, ...(signal ? { signal } : {}) });
    logger.verbose(`Posted the ${what} event`, { node });
    return true;
  } catch (err) {
    if (signal?.aborted) return false;
    logger.warn(`Could not post the ${what} event; continuing`, { node, err: (err as Error)?.message ?? String(err) });
    return false;
  }
}

/**
 * Posts the "Starting" event for this Node. An event is informational: any failure is logged and
 * swallowed, never fatal. Resolves true when the API server accepted it.
 */
export async function postBirthCry(api: Pick<KubeApi, 'request'>, nodeName: string, logger: Logger, signal?: AbortSignal): Promise<boolean> {
  return postNodeEvent(api, startingEvent(nodeName), 'Starting', logger, signal);
}

/** The action of the Warning events about host setup (upstream's read-only sysfs event uses it too). */
export const SETUP_HOST_ACTION = 'StartKubeProxy';

/**
 * The agent's NodeEventRecorder (structurally: `warning(reason, note): void`) over the API client:
 * each warning is posted as a Warning event regarding the Node, action StartKubeProxy, without
 * waiting; a failed POST is logged by postNodeEvent and never thrown. `settled()` resolves once every
 * post so far has finished (tests, or a caller that wants to give them a chance before exiting).
 */
export class ApiNodeEventRecorder {
  private lastNanos = 0n;
  private readonly pending = new Set<Promise<boolean>>();

  constructor(
    private readonly opts: {
      readonly api: Pick<KubeApi, 'request'>;
      readonly nodeName: string;
      readonly logger: Logger;
      readonly signal?: AbortSignal;
      /** Test seams. */
      readonly now?: () => Date;
      readonly hostname?: string;
    },
  ) {}

  warning(reason: string, note: string): void {
    const { api, nodeName, logger, signal } = this.opts;
    try {
      const now = this.opts.now?.() ?? new Date();
      const ms = BigInt(now.getTime()) * 1_000_000n;
      this.lastNanos = ms > this.lastNanos ? ms : this.lastNanos + 1n;
      const event = nodeEvent(nodeName, { type: 'Warning', reason, action: SETUP_HOST_ACTION, note }, now, this.opts.hostname ?? osHostname(), this.lastNanos);
      const post = postNodeEvent(api, event, `${reason} warning`, logger, signal);
      this.pending.add(post);
      void post.finally(() => this.pending.delete(post));
    } catch (err) {
      logger.warn('Could not record a Node event; continuing', { reason, err: (err as Error)?.message ?? String(err) });
    }
  }

  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
