import type { TableSkeleton } from '../render/table-skeleton.js';
import type { ServicePortRender } from '../render/service-port-render.js';
import type { SyncStep, TableSync } from './table-sync.js';

/**
 * Services per cold-start transaction. The kernel's cost of one nft transaction grows with the
 * square of its size (binding each service's anonymous `numgen … vmap` set walks the transaction's
 * list), so a big table is written in batches: at 10,000 services × 5 endpoints, 10 batches of
 * 1,000 cost ~12 s in the kernel where one transaction costs ~40 s (tools/src/bench, README).
 */
export const COLD_START_BATCH = 1000;

/** A step planned and recorded as committed ahead of its run: see coldStartBatches. */
export interface PlannedStep extends SyncStep {
  /** Its effect is already recorded: the next step may be planned while this one runs. */
  readonly precommitted: true;
}

export interface BatchOptions {
  readonly batch?: number;
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
 * services in batches. Each step is planned when first used and recorded as committed right away,
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
  const batch = options.batch ?? COLD_START_BATCH;
  const deferElements = options.elementsLast === true;
  const steps: PlannedStep[] = [];
  const count = Math.max(1, Math.ceil(changes.length / batch));
  for (let i = 0; i < count; i++) {
    const slice = changes.slice(i * batch, (i + 1) * batch);
    steps.push(precommitted(() => table.step(i === 0 ? skeleton : null, slice, now, { deferElements })));
  }
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
