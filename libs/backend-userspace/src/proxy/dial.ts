import { connect, type Socket } from 'node:net';
import type { Logger } from '@kube-proxy/core';
import type { EndpointPicker, ProxyTarget } from './endpoint-picker.js';

/**
 * Connect timeouts of successive tries, upstream's EndpointDialTimeouts: a refused or silent endpoint
 * costs the client at most 3.75 s before it is told no endpoint answered.
 */
export const ENDPOINT_DIAL_TIMEOUTS_MS: readonly number[] = [250, 500, 1000, 2000];

/** Opens a TCP connection to `target`, failing after `timeoutMs`. */
export function dialTCP(target: ProxyTarget, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.ip, port: target.port, allowHalfOpen: true, noDelay: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connect to ${target.key} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', onError);
      resolve(socket);
    });
    const onError = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('error', onError);
  });
}

export interface DialOutcome {
  readonly socket: Socket;
  readonly target: ProxyTarget;
}

/**
 * Upstream's TryConnectEndpoints: pick an endpoint (sticky for the client on the first try only),
 * connect with a growing timeout, move to an endpoint not tried yet on failure (the same one again
 * only when all have failed). `onFailure` counts each failed try. Resolves undefined when there is
 * no endpoint or every try failed, or when `cancelled()` turns true (the client went away meanwhile).
 */
export async function dialWithFailover(
  picker: EndpointPicker,
  clientIP: string,
  logger: Logger,
  onFailure: () => void,
  cancelled: () => boolean,
  dial: (target: ProxyTarget, timeoutMs: number) => Promise<Socket> = dialTCP,
  timeouts: readonly number[] = ENDPOINT_DIAL_TIMEOUTS_MS,
): Promise<DialOutcome | undefined> {
  let tried: Set<string> | undefined;
  for (let i = 0; i < timeouts.length; i++) {
    const target = picker.next(clientIP, i > 0, tried);
    if (target === undefined) return undefined;
    try {
      const socket = await dial(target, timeouts[i] as number);
      if (cancelled()) {
        socket.destroy();
        return undefined;
      }
      return { socket, target };
    } catch (err) {
      onFailure();
      (tried ??= new Set()).add(target.key);
      logger.verbose('Dial to endpoint failed, trying the next one', { endpoint: target.key, try: i + 1, error: String(err) });
      if (cancelled()) return undefined;
    }
  }
  return undefined;
}
