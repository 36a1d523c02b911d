import type { KubeProxyConfiguration } from './types.js';
import { DEFAULT_HEALTHZ_PORT, DEFAULT_METRICS_PORT } from './defaults.js';
import { FlagError, type ParsedFlags } from './flag-parse.js';
import { KUBE_PROXY_FLAGS, type FlagValue } from './flag-table.js';
import { appendPortIfNeeded } from './net-text.js';

/**
 * Flags whose effect depends on the proxy mode or on other flags, handled by hand below; every other
 * flag with a configField is a plain "set this field".
 */
const SPECIAL = new Set([
  'iptables-sync-period',
  'iptables-min-sync-period',
  'ipvs-sync-period',
  'ipvs-min-sync-period',
  'masquerade-all',
  'feature-gates',
  'hostname-override',
  'backend-plugin',
]);

/**
 * Applies command-line flags to a configuration with upstream's precedence (options.go Complete):
 *
 * - With a config file, the file wins: only the logging flags (copyLogsFromFlags) and
 *   --hostname-override (processHostnameOverrideFlag) still apply. Our --backend-plugin adds to the
 *   file's list.
 * - Without one, flags set their fields on `cfg` (normally defaultConfiguration()). The sync-period
 *   flags follow processV1Alpha1Flags: --iptables-* apply unless the mode is ipvs, --ipvs-* only in ipvs
 *   mode; in ipvs mode the IPVS periods otherwise start from the iptables values, as upstream's
 *   shared internal field does. A healthz or metrics address given without a port gets the default
 *   port (unless --write-config-to is given, as upstream; --healthz-port / --metrics-port, which could
 *   also set or disable it, were removed in v1.32).
 *
 * Returns a new configuration; `cfg` is not modified. Throws FlagError for an empty --hostname-override.
 */
export function applyFlags(cfg: KubeProxyConfiguration, parsed: ParsedFlags, configFileGiven: boolean): KubeProxyConfiguration {
  const out = structuredClone(cfg);
  const given = parsed.values;

  for (const spec of KUBE_PROXY_FLAGS) {
    if (!spec.configField || SPECIAL.has(spec.name) || spec.noEffect) continue;
    const value = given.get(spec.name);
    if (value === undefined) continue;
    if (configFileGiven && spec.ignoredWithConfig) continue;
    setPath(out, spec.configField, value);
  }

  if (!configFileGiven) applyModeDependentFlags(cfg, out, given);

  if (!configFileGiven && !parsed.options.writeConfigTo) {
    out.healthzBindAddress = appendPortIfNeeded(out.healthzBindAddress, DEFAULT_HEALTHZ_PORT);
    out.metricsBindAddress = appendPortIfNeeded(out.metricsBindAddress, DEFAULT_METRICS_PORT);
  }

  const hostname = given.get('hostname-override');
  if (typeof hostname === 'string' && hostname.length > 0) {
    const trimmed = hostname.trim();
    if (trimmed === '') throw new FlagError('empty hostname-override is invalid', '--hostname-override');
    out.hostnameOverride = trimmed.toLowerCase();
  }

  const plugins = given.get('backend-plugin');
  if (Array.isArray(plugins)) {
    out.backendPlugins = [...new Set([...out.backendPlugins, ...(plugins as readonly string[]).filter((p) => p !== '')])];
  }
  return out;
}

function applyModeDependentFlags(before: KubeProxyConfiguration, out: KubeProxyConfiguration, given: ReadonlyMap<string, FlagValue>): void {
  const mode = out.mode;
  const dur = (name: string): string | undefined => {
    const v = given.get(name);
    return typeof v === 'string' ? v : undefined;
  };

  const gates = given.get('feature-gates');
  if (gates && typeof gates === 'object' && !Array.isArray(gates)) {
    out.featureGates = { ...out.featureGates, ...(gates as Record<string, boolean>) };
  }

  // Upstream keeps one internal masqueradeAll and one pair of sync periods and maps them to the section
  // of the mode in use. Our "" mode is decided later by detection (iptables or nftables), so it gets both.
  const toIptables = mode !== 'nftables';
  const toNftables = mode === 'nftables' || mode === '';
  const masqueradeAll = given.get('masquerade-all');
  if (typeof masqueradeAll === 'boolean') {
    if (toIptables) out.iptables.masqueradeAll = masqueradeAll;
    if (toNftables) out.nftables.masqueradeAll = masqueradeAll;
  }

  if (mode === 'ipvs') {
    out.ipvs.syncPeriod = dur('ipvs-sync-period') ?? before.iptables.syncPeriod;
    out.ipvs.minSyncPeriod = dur('ipvs-min-sync-period') ?? before.iptables.minSyncPeriod;
    return;
  }
  const sync = dur('iptables-sync-period');
  const minSync = dur('iptables-min-sync-period');
  if (sync !== undefined) {
    if (toIptables) out.iptables.syncPeriod = sync;
    if (toNftables) out.nftables.syncPeriod = sync;
  }
  if (minSync !== undefined) {
    if (toIptables) out.iptables.minSyncPeriod = minSync;
    if (toNftables) out.nftables.minSyncPeriod = minSync;
  }
}

function setPath(target: KubeProxyConfiguration, path: string, value: FlagValue): void {
  const keys = path.split('.');
  let node = target as unknown as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const leaf = keys[keys.length - 1];
  node[leaf] = Array.isArray(value) ? [...(value as readonly string[])] : value;
}
