import { EMULATED_KUBERNETES_VERSION, isFeatureEnabled, type KubeProxyConfiguration, type ParsedFlags } from '@kube-proxy/core';
import { flagzText, statuszText, type ZPages } from '../agent/index.js';
import { KUBE_PROXY_TS_VERSION } from './version.js';

/** The metrics server's fixed paths (the /debug routes are listed when served). */
const METRICS_PATHS = ['/configz', '/healthz', '/metrics', '/proxyMode'];

/**
 * The z-pages of this run, per their gates (ComponentStatusz, ComponentFlagz): /statusz from the
 * process's start and versions, /flagz from the flags it was started with (defaults for the rest).
 */
export function zpagesFor(parsed: ParsedFlags, config: KubeProxyConfiguration, debugServed: boolean, now: () => number = Date.now): ZPages {
  const statusz = isFeatureEnabled(config.featureGates, 'ComponentStatusz');
  const flagz = isFeatureEnabled(config.featureGates, 'ComponentFlagz');
  const startedMs = now() - process.uptime() * 1000;
  const paths = [...METRICS_PATHS, ...(statusz ? ['/statusz'] : []), ...(flagz ? ['/flagz'] : []), ...(debugServed ? ['/debug/explain', '/debug/trace'] : [])];
  const { major, minor } = EMULATED_KUBERNETES_VERSION;
  return {
    ...(statusz
      ? {
          statusz: () =>
            statuszText({
              startedMs,
              nowMs: now(),
              binaryVersion: KUBE_PROXY_TS_VERSION,
              emulationVersion: `${major}.${minor}`,
              runtimeVersion: process.version,
              paths,
            }),
        }
      : {}),
    ...(flagz ? { flagz: () => flagzText(parsed.values) } : {}),
  };
}
