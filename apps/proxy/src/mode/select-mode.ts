import { ipvsModeAllowed, proxyModeGateError, type BackendPlugin, type HostCapabilities, type KubeProxyConfiguration, type Logger } from '@kube-proxy/core';
import type { BackendRegistry } from '../registry/backend-registry.js';

/** A mode-selection failure with the process exit code the CLI must use. */
export class ModeSelectionError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface SelectModeOptions {
  /** config.mode: "" or "auto" means decide from the host's capabilities. */
  readonly requested: string;
  readonly registry: BackendRegistry;
  readonly host: HostCapabilities;
  readonly logger: Logger;
  /**
   * --dry-run never touches the host, so a backend whose tools are missing can still render its
   * would-be state: its detect() verdict is reported but not enforced.
   */
  readonly dryRun: boolean;
  /** Handed to each backend's detect() (e.g. the IPVS scheduler must exist in the kernel). */
  readonly config?: KubeProxyConfiguration;
}

/**
 * Upstream's warning when IPVS mode starts (v1.35, KEP-5495, PR #134539), logged at error level as
 * upstream does; the alternative is named from what this build offers.
 */
export const IPVS_DEPRECATION_MESSAGE =
  "The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.";

/**
 * What kube-proxy-ts does about it (issue 23): upstream turns the KubeProxyIPVS gate off by default in
 * v1.40 and removes the mode in v1.43 without moving it elsewhere (KEP-5495); we keep it.
 */
export const IPVS_KEPT_NOTE =
  'kube-proxy-ts keeps the ipvs mode, programming exactly upstream\'s rules, after upstream disables it by default (v1.40) ' +
  'and removes it (v1.43); --feature-gates=KubeProxyIPVS=false refuses it, as upstream.';

/** The deprecation warning this build logs and records on the Node: upstream's words, then ours. */
export const IPVS_DEPRECATION_WARNING = `${IPVS_DEPRECATION_MESSAGE} ${IPVS_KEPT_NOTE}`;

/**
 * Logged (and recorded on the Node by the caller) when no mode was configured: upstream v1.37 warns
 * that its Linux default moves from iptables to nftables (PR #139957, KEP-5343). The wording is ours;
 * our own choice for an empty mode follows the design card (IPVS when the kernel supports it, else
 * iptables) and is logged separately.
 */
export const DEFAULTED_MODE_WARNING =
  "No proxy mode was specified. Upstream kube-proxy's default on Linux changes from 'iptables' to 'nftables' in a future " +
  'release (planned for v1.40); set --proxy-mode (or mode in the config file) explicitly to keep the mode you run.';

/** The Node event reason for DEFAULTED_MODE_WARNING (ours; upstream's reason was not readable). */
export const REASON_PROXY_MODE_DEFAULTED = 'ProxyModeDefaulted';

/** True when the configured mode is empty (or "auto"): the mode is then left to auto-selection. */
export function modeLeftToDefault(requested: string): boolean {
  return requested === '' || requested === 'auto';
}

/**
 * The Node events upstream records about the mode at startup (Warning type): the defaulted mode and
 * the IPVS deprecation (reason IPVSDeprecation, as upstream). The recorder is the no-op one in
 * --dry-run and with --manifests.
 */
export function recordModeEvents(events: { warning(reason: string, note: string): void }, requested: string, selected: string): void {
  if (modeLeftToDefault(requested)) events.warning(REASON_PROXY_MODE_DEFAULTED, DEFAULTED_MODE_WARNING);
  if (selected === 'ipvs') events.warning('IPVSDeprecation', IPVS_DEPRECATION_WARNING);
}

function warnIpvsDeprecated(registry: BackendRegistry, logger: Logger): void {
  const alternative = registry.get('nftables') ? 'nftables' : 'iptables';
  logger.error(IPVS_DEPRECATION_WARNING, {
    alternative: `--proxy-mode=${alternative}`,
    ...(alternative === 'nftables' ? {} : { note: 'this build has no nftables mode yet; iptables is the supported alternative' }),
  });
}

/**
 * Picks the backend to run, as upstream picks the proxier: an explicit mode must be registered and
 * usable; auto prefers IPVS when the kernel and tools support it (and the KubeProxyIPVS gate is on),
 * else iptables.
 */
export async function selectMode(opts: SelectModeOptions): Promise<BackendPlugin> {
  const { requested, registry, host, logger, dryRun, config } = opts;
  const gates = config?.featureGates ?? {};
  // Validation refuses this first; repeated here for callers that skip it.
  const gateError = proxyModeGateError(requested, gates);
  if (gateError) throw new ModeSelectionError(`invalid configuration: mode: ${gateError}`, 1);
  if (modeLeftToDefault(requested)) logger.warn(DEFAULTED_MODE_WARNING);
  const plugin = await choose(requested, registry, host, logger, dryRun, config);
  if (plugin.name === 'ipvs') warnIpvsDeprecated(registry, logger);
  return plugin;
}

async function choose(
  requested: string,
  registry: BackendRegistry,
  host: HostCapabilities,
  logger: Logger,
  dryRun: boolean,
  config: KubeProxyConfiguration | undefined,
): Promise<BackendPlugin> {
  if (requested !== '' && requested !== 'auto') {
    const plugin = registry.get(requested);
    if (!plugin) {
      throw new ModeSelectionError(
        `unknown proxy mode "${requested}"; registered modes: ${registry.names().join(', ')}`,
        2,
      );
    }
    const verdict = await plugin.detect(host, config);
    if (!verdict.usable) {
      if (!dryRun) {
        throw new ModeSelectionError(`proxy mode "${requested}" cannot run on this node: ${verdict.reason}`, 1);
      }
      logger.warn('Selected proxy mode would not be usable on this host; continuing because of --dry-run', {
        mode: requested,
        reason: verdict.reason,
      });
    }
    logger.info('Using proxy mode', { mode: requested, backendVersion: plugin.version, reason: verdict.reason });
    return plugin;
  }

  const ipvs = registry.get('ipvs');
  const iptables = registry.get('iptables');
  if (ipvs && !ipvsModeAllowed(config?.featureGates ?? {})) {
    logger.info('Proxy mode not set; the KubeProxyIPVS feature gate is off, so ipvs is not considered');
  } else if (ipvs) {
    const verdict = await ipvs.detect(host, config);
    if (verdict.usable) {
      logger.info('Proxy mode not set; kernel supports IPVS, using ipvs', { reason: verdict.reason });
      return ipvs;
    }
    logger.info('Proxy mode not set; IPVS is unavailable, falling back to iptables', { ipvsReason: verdict.reason });
  }
  if (!iptables) {
    throw new ModeSelectionError('proxy mode not set and no iptables backend is registered', 1);
  }
  const verdict = await iptables.detect(host, config);
  if (!verdict.usable && !dryRun) {
    throw new ModeSelectionError(`proxy mode "iptables" cannot run on this node: ${verdict.reason}`, 1);
  }
  logger.info('Using proxy mode', { mode: 'iptables', backendVersion: iptables.version, reason: verdict.reason });
  return iptables;
}
