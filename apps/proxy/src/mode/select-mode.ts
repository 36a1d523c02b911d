import type { BackendPlugin, HostCapabilities, KubeProxyConfiguration, Logger } from '@kube-proxy/core';
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
 * Upstream's warning when IPVS mode starts (v1.35, KEP-5495), logged at error level as upstream
 * does; the alternative is named from what this build offers.
 */
export const IPVS_DEPRECATION_MESSAGE =
  "The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.";

function warnIpvsDeprecated(registry: BackendRegistry, logger: Logger): void {
  const alternative = registry.get('nftables') ? 'nftables' : 'iptables';
  logger.error(IPVS_DEPRECATION_MESSAGE, {
    alternative: `--proxy-mode=${alternative}`,
    ...(alternative === 'nftables' ? {} : { note: 'this build has no nftables mode yet; iptables is the supported alternative' }),
  });
}

/**
 * Picks the backend to run, as upstream picks the proxier: an explicit mode must be registered and
 * usable; auto prefers IPVS when the kernel and tools support it, else iptables.
 */
export async function selectMode(opts: SelectModeOptions): Promise<BackendPlugin> {
  const { requested, registry, host, logger, dryRun, config } = opts;
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
  if (ipvs) {
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
