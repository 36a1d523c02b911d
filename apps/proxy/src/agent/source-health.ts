/**
 * The health of the configuration source as /healthz sees it. Upstream's /healthz only looks at the
 * proxier (a change not programmed within 2 × syncPeriod); here a source that cannot reach the API
 * server for as long also fails /healthz (not /livez), since the proxier cannot be told of changes.
 * The manifest source has no such state and is not given to the agent (always healthy).
 */
export interface SourceHealth {
  /** False once the source has been cut off from its data for too long. */
  isHealthy(now: number): boolean;
  /** Why it is unhealthy, for the /healthz body. */
  reason?(now: number): string | undefined;
}

/** What apiSourceHealth reads of each informer (ApiSource.health()'s InformerHealth). */
export interface InformerHealthView {
  readonly resource: string;
  readonly state: string;
  /** Epoch ms of the first failure since the watch was last up. */
  readonly failingSince?: number;
  readonly lastError?: string;
}

/**
 * An API source's health: unhealthy while any running informer has been failing to reach the API
 * server for `timeoutMs` or longer (the proxier's healthz timeout, 2 × syncPeriod). Informers that
 * have not failed, including ones still listing at startup, are healthy, so a starting proxy answers
 * 200 as upstream's does.
 */
export function apiSourceHealth(source: { health(): readonly InformerHealthView[] }, timeoutMs: number): SourceHealth {
  const failing = (now: number) =>
    source
      .health()
      .filter((h) => h.state !== 'idle' && h.state !== 'stopped' && h.failingSince !== undefined && now - h.failingSince >= timeoutMs);
  return {
    isHealthy: (now) => failing(now).length === 0,
    reason: (now) => {
      const f = failing(now);
      if (f.length === 0) return undefined;
      const since = Math.min(...f.map((h) => h.failingSince ?? now));
      const detail = f.map((h) => `${h.resource}${h.lastError ? ` (${h.lastError})` : ''}`).join(', ');
      return `API server unreachable for ${Math.floor((now - since) / 1000)}s: ${detail}`;
    },
  };
}
