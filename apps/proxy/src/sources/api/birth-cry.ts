import { hostname as osHostname } from 'node:os';
import type { Logger } from '@kube-proxy/core';
import type { KubeApi } from './kube-api.js';

const REPORTING_CONTROLLER = 'kube-proxy';

/** metav1.MicroTime's JSON form: RFC 3339 with exactly six fractional digits (the API server insists). */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * The events.k8s.io/v1 Event upstream's birthCry records: reason Starting, action StartKubeProxy,
 * regarding the Node (whose reference, as upstream, uses the node name as UID), in namespace
 * "default", named `<node>.<hex unix nanos>` like client-go's event recorder.
 */
export function startingEvent(nodeName: string, now: Date = new Date(), hostname: string = osHostname()): Record<string, unknown> {
  const nanos = BigInt(now.getTime()) * 1_000_000n;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${nodeName}.${nanos.toString(16)}`, namespace: 'default' },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: `${REPORTING_CONTROLLER}-${hostname}`.slice(0, 128),
    action: 'StartKubeProxy',
    reason: 'Starting',
    note: 'Starting kube-proxy.',
    type: 'Normal',
    regarding: { kind: 'Node', name: nodeName, uid: nodeName },
  };
}

/**
 * Posts the "Starting" event for this Node. An event is informational: any failure is logged and
 * swallowed, never fatal. Resolves true when the API server accepted it.
 */
export async function postBirthCry(api: Pick<KubeApi, 'request'>, nodeName: string, logger: Logger, signal?: AbortSignal): Promise<boolean> {
  try {
    await api.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      body: startingEvent(nodeName),
      ...(signal ? { signal } : {}),
    });
    logger.verbose('Posted the Starting event', { node: nodeName });
    return true;
  } catch (err) {
    if (signal?.aborted) return false;
    logger.warn('Could not post the Starting event; continuing', { node: nodeName, err: (err as Error).message });
    return false;
  }
}
