/**
 * What the host benchmark hands the guest (one JSON document on the guest script's stdin) and what
 * the guest hands back (one JSON document on its stdout): the exact batches the host rendered, the
 * fingerprints the kernel must hold at the end, and the guest's own timings.
 */
import type { Digest } from './ipvs-kernel-digest.js';
import type { FullSyncTimings, IpvsPayloads } from './ipvs-workload.js';

/** What the kernel must hold: `ipvsadm --save -n`, `ipset save`, kube-ipvs0's addresses. */
export interface KernelExpectation {
  readonly ipvsadm: Digest;
  readonly ipset: Digest;
  readonly addresses: Digest;
}

export interface GuestJob {
  readonly n: number;
  readonly full: IpvsPayloads;
  readonly change: IpvsPayloads;
  /** The state after the full sync and then the change (checked once, at the end). */
  readonly expectAfterChange: KernelExpectation;
  /** Bound on each tool run inside the guest. */
  readonly toolTimeoutMs: number;
  /** Rounds of (full apply, JS yardstick, native yardstick), each in a fresh network namespace. */
  readonly rounds: number;
}

/** One round (ipvs-guest-round.ts); `change` only in the last. */
export interface RoundJob {
  readonly n: number;
  readonly full: IpvsPayloads;
  readonly change: { readonly payloads: IpvsPayloads; readonly expectAfter: KernelExpectation } | null;
  readonly toolTimeoutMs: number;
}

export interface RoundResult {
  readonly full: ApplyTimings;
  readonly yardstick: FullSyncTimings;
  readonly nativeMs: number;
  readonly change: ApplyTimings | null;
  readonly phasesMs: Readonly<Record<string, number>>;
}

/** Wall-clock ms of each tool's run in the guest; null when its batch was empty (nothing is run). */
export interface ApplyTimings {
  readonly ipvsadm: number | null;
  readonly ipset: number | null;
  readonly address: number | null;
}

export interface GuestResult {
  /** The full apply of the round with the median total. */
  readonly full: ApplyTimings;
  /** Each round's full apply total (ipvsadm + ipset + ip), in round order. */
  readonly fullRoundsMs: readonly number[];
  readonly change: ApplyTimings;
  /** measureFullSync(n) in the guest, the round with the median total: the host's CPU work, under emulation. */
  readonly yardstick: FullSyncTimings;
  readonly yardstickRoundsMs: readonly number[];
  /** measureNativeYardstick of the full ipvsadm batch in the guest, median over the rounds. */
  readonly nativeYardstickMs: number;
  readonly nativeRoundsMs: readonly number[];
  readonly guestKernel: string;
  /** Wall-clock ms of each phase of the guest's job (preload, applies, read-back checks, yardstick). */
  readonly phasesMs: Readonly<Record<string, number>>;
}
