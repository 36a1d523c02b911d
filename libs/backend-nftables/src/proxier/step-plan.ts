/**
 * What one TableSync step is going to write and, once nft accepted it, make true: the working
 * state of TableSync.step, filled by its phases (skeleton, services, elements) and then written
 * as one transaction in an order where every line only names what exists by then.
 */
import type { PlacedElement, ServicePortRender } from '../render/service-port-render.js';

export interface StepPlan {
  readonly rebuild: boolean;
  readonly deferElements: boolean;
  /** The skeleton's chains → rules fingerprint, when this step writes the skeleton. */
  skeletonPrints: Map<string, string> | null;
  /** Committed chain and affinity state to diff against (empty on a rebuild). */
  readonly chainState: ReadonlyMap<string, string>;
  readonly affinityState: ReadonlyMap<string, number>;

  // What to write, by phase.
  readonly newSets: string[];
  readonly newChains: string[];
  readonly flushes: string[];
  readonly setDeletes: string[];
  readonly ruleLines: Array<readonly [string, readonly string[]]>;
  readonly elementDeletes: Array<readonly [string, string]>;
  readonly elementAdds: PlacedElement[];
  /** Element keys (container\0key) whose claims changed. */
  readonly dirty: Set<string>;
  /**
   * Which service port each chain, set and element of this step is written for: nft names the line
   * it refuses, and the proxier leaves that service port out of the retry.
   */
  readonly objectOwner: Map<string, string>;
  readonly elementOwner: Map<string, string>;

  // What committing makes true.
  readonly staleNow: Map<string, number>;
  /** Stale chains this step adds again: no longer to be deleted. */
  readonly reused: Set<string>;
  readonly servicesAfter: Map<string, ServicePortRender | undefined>;
  readonly chainsAfter: Map<string, string | undefined>;
  readonly affinityAfter: Map<string, number | undefined>;
  readonly elementsAfter: Array<readonly [string, string, string | undefined]>;
}

export function newStepPlan(
  rebuild: boolean,
  deferElements: boolean,
  chains: ReadonlyMap<string, string>,
  affinity: ReadonlyMap<string, number>,
): StepPlan {
  return {
    rebuild,
    deferElements,
    skeletonPrints: null,
    chainState: rebuild ? new Map<string, string>() : chains,
    affinityState: rebuild ? new Map<string, number>() : affinity,
    newSets: [],
    newChains: [],
    flushes: [],
    setDeletes: [],
    ruleLines: [],
    elementDeletes: [],
    elementAdds: [],
    dirty: new Set<string>(),
    objectOwner: new Map<string, string>(),
    elementOwner: new Map<string, string>(),
    staleNow: new Map<string, number>(),
    reused: new Set<string>(),
    servicesAfter: new Map<string, ServicePortRender | undefined>(),
    chainsAfter: new Map<string, string | undefined>(),
    affinityAfter: new Map<string, number | undefined>(),
    elementsAfter: [],
  };
}
