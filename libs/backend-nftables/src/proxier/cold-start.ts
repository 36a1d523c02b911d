import type { TableSkeleton } from '../render/table-skeleton.js';
import type { ServicePortRender } from '../render/service-port-render.js';
import type { SyncStep, TableSync } from './table-sync.js';

/**
 * Anonymous sets and maps per cold-start transaction. The kernel's cost of one nft transaction
 * grows with the square of the anonymous sets in it (binding each rule's `numgen … map { … }` to
 * its set walks the transaction's list), so a big table is written in batches: at 10,000 services
 * × 5 endpoints (one map each), 10 batches of 1,000 cost ~12 s in the kernel where one transaction
 * costs 14–24 s (tools/bench, README).
 */
export const COLD_START_BATCH = 1000;

/**
 * Services per cold-start transaction whatever their anonymous sets. A service without any (one
 * endpoint: a plain `dnat to`, kubernetes PR #140723) costs the kernel nothing quadratic, while
 * every transaction costs nft a fetch of the table so far and the kernel a commit: at 10,000
 * services × 1 endpoint, 11 batches of 1,000 took 11.6 s and 2 transactions 3.5 s (issue 24).
 */
export const COLD_START_MAX_SERVICES = 15000;

/** The anonymous sets a service's rules bind (a `{ … }` in a rule: a map, vmap or set literal). */
export function anonymousSetsOf(render: ServicePortRender | undefined): number {
  let n = 0;
  for (const c of render?.chains ?? []) for (const r of c.rules) if (r.includes('{')) n++;
  return n;
}

/**
 * Consecutive slices of `changes`, each closed once it holds `batch` anonymous sets or `maxServices`
 * services (a service is never split; a slice holds at least one service).
 */
export function coldStartSlices<T extends { render: ServicePortRender | undefined }>(changes: readonly T[], batch: number, maxServices: number): T[][] {
  const slices: T[][] = [];
  let current: T[] = [];
  let weight = 0;
  for (const change of changes) {
    const w = anonymousSetsOf(change.render);
    if (current.length > 0 && (weight + w > batch || current.length >= maxServices)) {
      slices.push(current);
      current = [];
      weight = 0;
    }
    current.push(change);
    weight += w;
  }
  if (current.length > 0 || slices.length === 0) slices.push(current);
  return slices;
}

/** A step planned and recorded as committed ahead of its run: see coldStartBatches. */
export interface PlannedStep extends SyncStep {
  /** Its effect is already recorded: the next step may be planned while this one runs. */
  readonly precommitted: true;
}

export interface BatchOptions {
  /** Anonymous sets per transaction (COLD_START_BATCH). */
  readonly batch?: number;
  /** Services per transaction (COLD_START_MAX_SERVICES). */
  readonly maxServices?: number;
  /**
   * Into an empty table only: chains in batches, then every element in one last transaction. Until
   * then no map points at a new chain, so each commit's validation of what is reachable from the
   * hooks stays small; nothing was reachable before, so no traffic sees a half-written service.
   * A takeover (TableSync.adopt) must not defer: each service switches with its own batch.
   */
  readonly elementsLast?: boolean;
}

/**
 * The steps of a cold start (or of a takeover): the skeleton with the first batch, then whole
 * services in batches (coldStartSlices). Each step is planned when first used and recorded as committed right away,
 * so the proxier plans batch k+1 in JavaScript while nft and the kernel apply batch k on the other
 * core. If a batch fails, the recorded state is ahead of the kernel: the proxier then forgets it and
 * reads the kernel again before the next sync (that is what takes over a table).
 */
export function coldStartBatches(
  table: TableSync,
  skeleton: TableSkeleton,
  changes: ReadonlyArray<{ key: string; render: ServicePortRender | undefined }>,
  now: number,
  options: BatchOptions = {},
): PlannedStep[] {
  const deferElements = options.elementsLast === true;
  const steps: PlannedStep[] = [];
  const slices = coldStartSlices(changes, options.batch ?? COLD_START_BATCH, options.maxServices ?? COLD_START_MAX_SERVICES);
  slices.forEach((slice, i) => steps.push(precommitted(() => table.step(i === 0 ? skeleton : null, slice, now, { deferElements }))));
  if (deferElements) steps.push(precommitted(() => table.step(null, [], now)));
  return steps;
}

/** A step planned on first use (and then recorded as committed at once). */
function precommitted(plan: () => SyncStep): PlannedStep {
  let planned: SyncStep | null = null;
  const get = (): SyncStep => {
    if (planned === null) {
      planned = plan();
      planned.commit();
    }
    return planned;
  };
  return {
    precommitted: true,
    get tx() {
      return get().tx;
    },
    commit: () => void get(),
  };
}

/** A step whose transaction is planned on first use (after the previous step committed). */
export function lazyStep(plan: () => SyncStep): SyncStep {
  let planned: SyncStep | null = null;
  const get = () => (planned ??= plan());
  return {
    get tx() {
      return get().tx;
    },
    commit: () => get().commit(),
  };
}
