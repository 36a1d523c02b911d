/**
 * The startup warning issue 12 asks for: iptables-nft (the nft variant of iptables 1.8.x, Debian 12's
 * default) spends superlinear time in userspace on large restores — measured here: 1,000 services
 * (23k rules) in 1.7 s, 10,000 services (230k rules) not within 15 minutes, where iptables-legacy needs
 * 3.2 s. A node that large on iptables-nft never gets its rules, so say so before the first big restore
 * and name what to use instead, and once more with the time it really took when a restore was slow.
 * Each message is logged once per process; --dry-run applies nothing and warns about nothing. The
 * sync-duration metric (`kubeproxy_sync_proxy_rules_duration_seconds`) shows the time in any case.
 */
import type { HostCapabilities, Logger } from '@kube-proxy/core';

/** Rules in one restore above which iptables-nft 1.8.x takes tens of seconds to minutes. */
export const NFT_LARGE_RESTORE_RULES = 100_000;
/** A restore this slow is reported with its measured time. */
export const NFT_SLOW_RESTORE_MS = 30_000;

const ALTERNATIVE =
  'use iptables-legacy for a node this size (the proxy follows the variant holding kubelet\'s rules; e.g. update-alternatives --set iptables /usr/sbin/iptables-legacy on both kubelet\'s and the proxy\'s host) or, once this build has it, --proxy-mode=nftables';

export class NftScaleWarning {
  private warnedLarge = false;
  private warnedSlow = false;
  private readonly active: boolean;
  private readonly version: string;

  constructor(
    host: Pick<HostCapabilities, 'iptablesVariant' | 'tools'>,
    dryRun: boolean,
    private readonly logger: Logger,
  ) {
    this.active = !dryRun && host.iptablesVariant === 'nft';
    this.version = host.tools.iptables.version ?? 'unknown version';
  }

  /** Before a restore of `rules` rules (filter + nat lines written). */
  beforeRestore(rules: number): void {
    if (!this.active || this.warnedLarge || rules <= NFT_LARGE_RESTORE_RULES) return;
    this.warnedLarge = true;
    this.logger.warn(`iptables ${this.version} (nft) loads large rulesets very slowly: this restore has ${rules} rules, which may take many minutes; ${ALTERNATIVE}`, {
      rules,
      threshold: NFT_LARGE_RESTORE_RULES,
    });
  }

  /** After a restore (successful or not) that took `ms`. */
  afterRestore(rules: number, ms: number): void {
    if (!this.active || this.warnedSlow || ms < NFT_SLOW_RESTORE_MS) return;
    this.warnedSlow = true;
    this.logger.warn(`iptables-nft-restore took ${(ms / 1000).toFixed(1)} s for ${rules} rules (iptables ${this.version}); ${ALTERNATIVE}`, { rules, durationMs: ms });
  }
}
