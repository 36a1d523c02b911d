/** Which of the agent's listeners to open. */
export interface ServePolicy {
  readonly healthz: boolean;
  readonly metrics: boolean;
  /** Health-check node ports of Services with externalTrafficPolicy=Local. */
  readonly serviceHealthChecks: boolean;
}

/**
 * Outside --dry-run everything is served, as upstream. A dry run must not change the host, and
 * binding node ports is a change other software can see, so it opens nothing, except a healthz or
 * metrics server whose address was given explicitly on the command line (to scrape a dry run on
 * purpose). Health-check node ports are never opened in a dry run.
 */
export function servePolicy(opts: {
  readonly dryRun: boolean;
  /** Long flag names given on the command line. */
  readonly flagsGiven: ReadonlySet<string> | ReadonlyMap<string, unknown>;
}): ServePolicy {
  if (!opts.dryRun) return { healthz: true, metrics: true, serviceHealthChecks: true };
  return {
    healthz: opts.flagsGiven.has('healthz-bind-address'),
    metrics: opts.flagsGiven.has('metrics-bind-address'),
    serviceHealthChecks: false,
  };
}
