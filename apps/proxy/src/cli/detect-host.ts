import { detectHostCapabilities, type CommandExecutor, type DetectOptions, type HostCapabilities, type HostFs, type Logger } from '@kube-proxy/core';
import { ipvsVerdict } from '@kube-proxy/backend-ipvs';
import { nftablesVerdict } from '@kube-proxy/backend-nftables';

/*
 * The host as the app sees it: core gathers the evidence, the built-in backends judge their modes.
 * Core knows no mode; HostCapabilities' v1 `ipvs` and `nftables` members are filled here, by the
 * composition root, from the verdict functions the IPVS and nftables backends export.
 */

/** The built-in modes' verdicts behind HostCapabilities.ipvs / .nftables. */
export const BUILT_IN_VERDICTS: NonNullable<DetectOptions['verdicts']> = { ipvs: ipvsVerdict, nftables: nftablesVerdict };

/** Detects what this node offers, with the built-in backends' verdicts. Only reads. */
export function detectHost(fs: HostFs, exec: CommandExecutor, logger?: Logger, options: Omit<DetectOptions, 'verdicts'> = {}): Promise<HostCapabilities> {
  return detectHostCapabilities(fs, exec, logger, { ...options, verdicts: BUILT_IN_VERDICTS });
}
