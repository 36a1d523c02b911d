/**
 * The startup warning issue 12 asks for: iptables-nft (the nft variant of iptables 1.8.x, Debian 12's
 * default) spends superlinear time in userspace on large restores. Full syncs open each table with
 * `-S` (core's nft-restore-cache-hint.ts), which took 10,000 services (170k nat rules) from "not
 * within 15 minutes" to 7–9 s here; the rest still grows faster than the ruleset: 30,000 services
 * (510k rules) took 47 s, where iptables-legacy needs 17–26 s. So a node past ~17,000 services
 * (300k rules) hears it before its first big restore, with what to use instead, and any restore
 * slower than 30 s is reported with its time. Each message is logged once per process; --dry-run
 * applies nothing and warns about nothing. The sync-duration metric
 * (`kubeproxy_sync_proxy_rules_duration_seconds`) shows the time in any case.
 */
import type { HostCapabilities, Logger } from '@kube-proxy/core';

/** Rules in one restore above which iptables-nft 1.8.x takes most of a minute or more (full syncs). */
export const NFT_LARGE_RESTORE_RULES = 300_000;
/** A restore this slow is reported with its measured time. */
export const NFT_SLOW_RESTORE_MS = 30_000;

const ALTERNATIVE =
  'use iptables-legacy for a node this size (the proxy follows the variant holding kubelet\'s rules; e.g. update-alternatives --set iptables /usr/sbin/iptables-legacy on both kubelet\'s and the proxy\'s host) or --proxy-mode=nftables';

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
    this.logger.warn(`iptables ${this.version} (nft) loads large rulesets very slowly: this restore has ${rules} rules, which may take a minute or more (every full sync, restarts included); ${ALTERNATIVE}`, {
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
