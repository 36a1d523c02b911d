import type { Clock, Logger } from '@kube-proxy/core';
import type { NftInterface } from '../kernel/nft-interface.js';

export interface NftablesFlushMonitorOptions {
  readonly nft: NftInterface;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly intervalMs: number;
  /** Whether the proxier believes it has built the table (nothing to look for before). */
  readonly built: () => boolean;
  /** Called once the table was found gone (the proxier forgets it and asks for a full sync). */
  readonly onDeleted: () => void;
}

/**
 * No canary is needed in nftables mode (the table is ours alone), but someone may delete it
 * (`nft delete table ip kube-proxy`, `nft flush ruleset`): it is looked for every interval (the
 * sync period) with one cheap listing, and reported when gone.
 */
export class NftablesFlushMonitor {
  private timer: unknown = null;
  private stopped = false;

  constructor(private readonly o: NftablesFlushMonitorOptions) {}

  /** Arms the next check (idempotent: one pending check at most). */
  start(): void {
    if (this.stopped || this.timer !== null) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      void this.check().finally(() => this.start());
    }, this.o.intervalMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.stopped || !this.o.built()) return;
    let exists: boolean;
    try {
      exists = await this.o.nft.tableExists();
    } catch (err) {
      this.o.logger.error('Failed to look for the kube-proxy table', { error: String(err) });
      return;
    }
    if (!exists && !this.stopped) this.o.onDeleted();
  }
}
