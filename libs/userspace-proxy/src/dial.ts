import { connect, type Socket } from 'node:net';
import type { Logger } from '@kube-proxy/core';
import type { EndpointPicker, ProxyTarget } from './endpoint-picker.js';

/**
 * Connect timeouts of successive tries, upstream's EndpointDialTimeouts: a refused or silent endpoint
 * costs the client at most 3.75 s before it is told no endpoint answered.
 */
export const ENDPOINT_DIAL_TIMEOUTS_MS: readonly number[] = [250, 500, 1000, 2000];

/**
 * Read sizes for endpoint sockets. Reads start at Node's usual 64 KiB; a connection whose reads fill
 * the buffer (a bulk transfer) grows it up to 1 MiB, which cuts syscalls and allocations per byte
 * several times over on a loopback-speed path; a small read brings it back down.
 */
export const ENDPOINT_READ_MIN = 64 * 1024;
export const ENDPOINT_READ_MAX = 1024 * 1024;

/**
 * An endpoint socket read with `onread` (larger reads than a stream's): chunks go to `sink` once
 * one is attached (earlier ones are held), and `sink` returning false pauses the socket.
 */
export interface EndpointSocket extends Socket {
  /** `sink` gets every chunk; `flushed` says whether the last one has left the process already. */
  attach(sink: (chunk: Buffer) => boolean, flushed: () => boolean): void;
  flushed(): boolean;
}

/** Opens a TCP connection to `target`, failing after `timeoutMs`. */
export function dialTCP(target: ProxyTarget, timeoutMs: number): Promise<EndpointSocket> {
  return new Promise((resolve, reject) => {
    let sink: ((chunk: Buffer) => boolean) | undefined;
    let early: Buffer[] | undefined;
    let size = ENDPOINT_READ_MIN;
    // A buffer whose last chunk went straight to the kernel can take the next read (only kept while
    // reads fill it: an idle connection holds no buffer).
    let spare: Buffer | undefined;
    const socket = connect({
      host: target.ip,
      port: target.port,
      allowHalfOpen: true,
      noDelay: true,
      onread: {
        buffer: () => {
          const buffer = spare ?? Buffer.allocUnsafe(size);
          spare = undefined;
          return buffer;
        },
        callback: (bytes: number, buffer: Uint8Array): boolean => {
          const full = bytes === buffer.length;
          const nextSize = full ? Math.min(buffer.length * 4, ENDPOINT_READ_MAX) : bytes < buffer.length / 4 ? ENDPOINT_READ_MIN : buffer.length;
          const chunk = (buffer as Buffer).subarray(0, bytes);
          let more = false;
          if (sink !== undefined) {
            more = sink(chunk);
            if (full && buffer.length === nextSize && socket.flushed()) spare = buffer as Buffer;
          } else {
            (early ??= []).push(chunk);
          }
          size = nextSize;
          return more;
        },
      },
    }) as EndpointSocket;
    socket.flushed = () => false;
    socket.attach = (s, flushed) => {
      sink = s;
      socket.flushed = flushed;
      const held = early;
      early = undefined;
      let more = true;
      for (const chunk of held ?? []) more = s(chunk) && more;
      if (more) socket.resume();
    };
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
  readonly socket: EndpointSocket;
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
  dial: (target: ProxyTarget, timeoutMs: number) => Promise<EndpointSocket> = dialTCP,
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
