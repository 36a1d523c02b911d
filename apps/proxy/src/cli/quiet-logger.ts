import type { Logger } from '@kube-proxy/core';

/**
 * `trace` and `explain` print an answer, not a proxy's startup story: unless -v was given, only
 * warnings and errors reach stderr.
 */
export function quietLogger(logger: Logger): Logger {
  const quiet: Logger = {
    error: (m, meta) => logger.error(m, meta),
    warn: (m, meta) => logger.warn(m, meta),
    info: () => undefined,
    verbose: () => undefined,
    debug: () => undefined,
    child: (meta) => quietLogger(logger.child(meta)),
  };
  return quiet;
}
