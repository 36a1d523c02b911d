import type { Clock } from '@kube-proxy/core';
import { NFACCT_COUNTERS } from '../render/constants.js';
import type { NfacctClient } from './nfacct-client.js';

/** Which counters exist, in the shape renderRuleset's `nfacct` option takes. */
export interface NfacctPresence {
  readonly ctStateInvalidDropped: boolean;
  readonly localhostNodePortAccepted: boolean;
}

/** Packet counts by counter name, for the metrics; a counter that does not exist is absent. */
export type NfacctPackets = Readonly<Partial<Record<(typeof NFACCT_COUNTERS)[keyof typeof NFACCT_COUNTERS], number>>>;

/** Scrapes within this long of the last read reuse it: each read is one `nfacct list` exec. */
export const NFACCT_READ_CACHE_MS = 1000;

const NAMES = [NFACCT_COUNTERS.CT_STATE_INVALID_DROPPED, NFACCT_COUNTERS.LOCALHOST_NODEPORT_ACCEPTED] as const;

/**
 * The two nfacct counters of upstream's iptables proxier (ct_state_invalid_dropped_pkts,
 * localhost_nps_accepted_pkts), shared by the proxiers of both IP families of a process, since the
 * counters are per network namespace and not per family.
 *
 * Upstream ensures them on every full sync and writes `-m nfacct --nfacct-name NAME` only into the
 * rules whose counter exists (a rule naming a missing counter would fail the whole restore); the
 * metrics read the counters' packet counts when /metrics is scraped. Missing tool or kernel support
 * is silent here (verbose log only): the rules are written without the match and the metrics are not
 * exported. Never used in --dry-run (nothing is created, so the dry-run tables show no nfacct match).
 */
export class NfacctCounters {
  private exists = new Set<string>();
  private ensuring: Promise<NfacctPresence> | undefined;
  private cached: { at: number; value: Promise<NfacctPackets> } | undefined;

  constructor(
    private readonly client: NfacctClient,
    private readonly clock: Clock,
  ) {}

  /** Ensures both counters (once at a time: the two families' full syncs may overlap). */
  ensure(): Promise<NfacctPresence> {
    this.ensuring ??= (async () => {
      try {
        const next = new Set<string>();
        for (const name of NAMES) if (await this.client.ensure(name)) next.add(name);
        this.exists = next;
        return this.presence();
      } finally {
        this.ensuring = undefined;
      }
    })();
    return this.ensuring;
  }

  /** What the last ensure found. */
  presence(): NfacctPresence {
    return {
      ctStateInvalidDropped: this.exists.has(NFACCT_COUNTERS.CT_STATE_INVALID_DROPPED),
      localhostNodePortAccepted: this.exists.has(NFACCT_COUNTERS.LOCALHOST_NODEPORT_ACCEPTED),
    };
  }

  /** The counters' packet counts (cached for NFACCT_READ_CACHE_MS); {} when nothing can be read. */
  readPackets(): Promise<NfacctPackets> {
    const now = this.clock.now();
    if (this.cached && now - this.cached.at < NFACCT_READ_CACHE_MS) return this.cached.value;
    const value = this.read();
    this.cached = { at: now, value };
    return value;
  }

  private async read(): Promise<NfacctPackets> {
    if (this.exists.size === 0) return {};
    const all = await this.client.list();
    if (!all) return {};
    const out: Partial<Record<string, number>> = {};
    for (const name of NAMES) {
      const v = all.get(name);
      if (v !== undefined) out[name] = v.packets;
    }
    return out;
  }
}
