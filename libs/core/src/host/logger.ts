/**
 * The logging port. Shaped like a winston Logger subset so the winston logger satisfies it as-is,
 * and tests can pass a recording fake. Metadata objects are structured fields, never interpolated.
 */
export interface Logger {
  error(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  /** klog V(2)-ish detail. */
  verbose(message: string, meta?: Record<string, unknown>): void;
  /** klog V(4)+ detail. */
  debug(message: string, meta?: Record<string, unknown>): void;
  child(meta: Record<string, unknown>): Logger;
}

export const LOGGER = Symbol.for('kube-proxy.Logger');

/** A logger that drops everything: for tests that do not inspect logs. */
export const nullLogger: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  verbose: () => undefined,
  debug: () => undefined,
  child: () => nullLogger,
};
