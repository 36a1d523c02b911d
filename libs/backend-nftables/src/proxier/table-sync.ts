/**
 * What the kernel's kube-proxy table holds (as of the last committed transaction), and the
 * transactions that bring it to what the services want: the O(change) half of the nftables mode.
 *
 * A sync renders the services it was told changed (all of them on a full sync), compares each
 * one's chains, affinity sets and elements with what was committed, and writes only the
 * difference: new chains added, changed ones flushed and rewritten, elements added and deleted,
 * chains no longer used flushed at once and deleted a second later (a kernel older than 6.2 may
 * still hold a reference to a chain for a moment after the map element naming it is gone, as
 * upstream notes). nft applies each transaction atomically, so a failed one leaves the committed
 * state true and the next sync can diff against it again.
 */
import { NftTransaction } from '../nft/nft-transaction.js';
import type { NftFamily } from '../nft/nft-objects.js';
import { elementBody } from '../nft/nft-objects.js';
import { flatString } from '../nft/flat-strings.js';
import { ElementClaims } from './element-claims.js';
import type { AffinitySet, PlacedElement, ServicePortRender } from '../render/service-port-render.js';
import type { KernelTableState } from '../kernel/kernel-table-state.js';
import { isAffinitySetName } from '../names/object-names.js';
import { canonicalChain } from '../kernel/rule-canonical.js';
import { SET } from '../render/table-names.js';
import type { TableSkeleton } from '../render/table-skeleton.js';
import type { StepPlan } from './step-plan.js';
import { newStepPlan } from './step-plan.js';

/** Owner key of the skeleton's own elements (nodeport-ips). */
const SKELETON_OWNER = '';

/** The fingerprint of a chain a previous process left: its rules are unknown, so it is rewritten if wanted, flushed if not. */
const ADOPTED = '\0adopted';

/**
 * The fingerprint of a chain a previous process left whose rules the kernel listed: this prefix and
 * their canonical spelling (rule-canonical.ts). A wanted chain whose rules spell the same is kept
 * as it is; any other is rewritten; one nobody wants is flushed.
 */
const LISTED = '\0listed\n';

/** A fingerprint of a chain taken over from a previous process (and not written by us since). */
function isAdopted(fp: string): boolean {
  return fp.charCodeAt(0) === 0;
}

/** Whether a chain holding `before` already holds `rules` (`fp` their fingerprint). */
function holds(before: string | undefined, fp: string, rules: readonly string[]): boolean {
  if (before === fp) return true;
  return before !== undefined && before.startsWith(LISTED) && before.slice(LISTED.length) === canonicalChain(rules);
}

/** A stale chain is deleted once it has been unreferenced this long (upstream waits a second). */
export const STALE_CHAIN_DELAY_MS = 1000;

/** One rule is its own fingerprint (no copy); several are joined once, flat (nft/flat-strings.ts). */
function fingerprint(rules: readonly string[]): string {
  return rules.length === 1 ? rules[0]! : flatString(rules.join('\n'));
}

/** Sets each key to its value, or deletes it where the value is undefined. */
function applyToMap<V>(target: Map<string, V>, after: ReadonlyMap<string, V | undefined>): void {
  for (const [k, v] of after) {
    if (v === undefined) target.delete(k);
    else target.set(k, v);
  }
}

/**
 * A service port's affinity sets against the committed ones. Returns the chains to rewrite even if
 * unchanged: a changed timeout means delete + add, so every chain naming the set is flushed before
 * and rewritten after.
 */
function planAffinitySets(plan: StepPlan, key: string, render: ServicePortRender | undefined, old: ServicePortRender | undefined): Set<string> {
  const forceRewrite = new Set<string>();
  const wanted = new Map<string, AffinitySet>();
  for (const a of render?.affinitySets ?? []) wanted.set(a.name, a);
  for (const a of wanted.values()) {
    plan.objectOwner.set(a.name, key);
    const before = plan.affinityState.get(a.name);
    if (before === undefined) plan.newSets.push(a.name);
    else if (before !== a.timeoutSeconds) {
      // Re-added after its delete (writeStep's `readded`): an `add set` first would meet the old set.
      plan.setDeletes.push(a.name);
      for (const c of render?.chains ?? []) forceRewrite.add(c.name);
    }
    plan.affinityAfter.set(a.name, a.timeoutSeconds);
  }
  for (const a of old?.affinitySets ?? []) {
    if (!wanted.has(a.name)) {
      plan.objectOwner.set(a.name, key);
      plan.setDeletes.push(a.name);
      plan.affinityAfter.set(a.name, undefined);
    }
  }
  return forceRewrite;
}

/** The transaction(s) of one sync, and what committing each one makes true. */
export interface SyncStep {
  readonly tx: NftTransaction;
  /** Records the step's effect as committed; call only after the kernel accepted tx. */
  commit(): void;
}

export interface StepOptions {
  /** Start from an empty table in the same transaction (`add table` + `delete table` first). */
  readonly rebuild?: boolean;
  /**
   * Write no element changes (they stay pending for a later step): a cold start writes its chains
   * in batches and every element last, so no commit before the last validates a reachable graph.
   */
  readonly deferElements?: boolean;
}

interface ServiceChange {
  readonly key: string;
  readonly render: ServicePortRender | undefined;
}

export class TableSync {
  /** Skeleton chain → rules fingerprint; null until the table has been created by us. */
  private skeleton: Map<string, string> | null = null;
  private readonly services = new Map<string, ServicePortRender>();
  /** Service and endpoint chain → rules fingerprint. */
  private readonly chains = new Map<string, string>();
  private readonly affinity = new Map<string, number>();
  /** container → key → element body, as committed. */
  private readonly elements = new Map<string, Map<string, string>>();
  /** container\0key → its owners and their elements (the first owner's wins). */
  private readonly owners = new ElementClaims();
  /** Flushed chains waiting to be deleted, with when they went stale. */
  readonly staleChains = new Map<string, number>();

  constructor(private readonly family: NftFamily) {}

  get tableBuilt(): boolean {
    return this.skeleton !== null;
  }

  get serviceCount(): number {
    return this.services.size;
  }

  /** Keys of the services whose objects are committed. */
  committedServices(): IterableIterator<string> {
    return this.services.keys();
  }

  /** Forgets everything: the table is gone (deleted from outside, or by us in a rebuild). */
  forget(): void {
    this.skeleton = null;
    this.services.clear();
    this.chains.clear();
    this.affinity.clear();
    this.elements.clear();
    this.owners.clear();
    this.claims.clear();
    this.unsettled.clear();
    this.staleChains.clear();
    this.adoptedSets.clear();
    this.redeclare = false;
    this.adopting = false;
  }

  /** A transaction deleting the chains stale for at least STALE_CHAIN_DELAY_MS by `now`, or null. */
  staleChainCleanup(now: number): SyncStep | null {
    const due: string[] = [];
    for (const [chain, since] of this.staleChains) if (now - since >= STALE_CHAIN_DELAY_MS) due.push(chain);
    if (due.length === 0) return null;
    const tx = new NftTransaction(this.family);
    for (const chain of due) tx.deleteChain(chain);
    return { tx, commit: () => due.forEach((c) => this.staleChains.delete(c)) };
  }

  /**
   * One transaction bringing the skeleton (when given) and the `changes` services to what they
   * want. `rebuild` starts from an empty table in the same transaction (the committed state is not
   * trusted): `add table` + `delete table` first, then everything.
   */
  step(skeleton: TableSkeleton | null, changes: Iterable<ServiceChange>, now: number, options: StepOptions = {}): SyncStep {
    const tx = new NftTransaction(this.family);
    const plan = newStepPlan(options.rebuild === true, options.deferElements === true, this.chains, this.affinity);
    if (plan.rebuild) tx.addTable().deleteTable();

    // Phases, so every line only names what exists by then (see the class comment).
    if (skeleton) this.planSkeleton(tx, plan, skeleton);
    else if (plan.rebuild || !this.skeleton) throw new Error('nftables: the table skeleton must come with the first transaction');
    for (const change of changes) this.planService(plan, change, now);
    this.planElements(plan);
    this.writeStep(tx, plan);
    return { tx, commit: () => this.commitStep(plan) };
  }

  /** The skeleton's declarations (first time, or after adopt()) and its chains whose rules changed; claims its nodeport-ips elements. */
  private planSkeleton(tx: NftTransaction, plan: StepPlan, skeleton: TableSkeleton): void {
    const base = plan.rebuild ? null : this.skeleton;
    const prints = new Map<string, string>();
    plan.skeletonPrints = prints;
    if (!base || this.redeclare) {
      tx.addTable();
      for (const s of skeleton.sets) tx.addSet(s);
      for (const m of skeleton.maps) tx.addMap(m);
    }
    for (const c of skeleton.chains) {
      const fp = fingerprint(c.rules);
      prints.set(c.decl.name, fp);
      const before = base?.get(c.decl.name);
      if (holds(before, fp, c.rules)) continue;
      tx.addChain(c.decl);
      if (before !== undefined) tx.flushChain(c.decl.name);
      plan.ruleLines.push([c.decl.name, c.rules]);
    }
    this.own(SKELETON_OWNER, skeleton.nodePortIPs.map((ip) => ({ container: SET.nodePortIPs, key: ip })), plan.dirty);
  }

  /** One service port's affinity sets, chains and element claims against what was committed. */
  private planService(plan: StepPlan, { key, render }: ServiceChange, now: number): void {
    const old = plan.rebuild ? undefined : this.services.get(key);
    plan.servicesAfter.set(key, render);
    const forceRewrite = planAffinitySets(plan, key, render, old);
    const newNames = new Set<string>();
    for (const c of render?.chains ?? []) {
      newNames.add(c.name);
      plan.objectOwner.set(c.name, key);
      const fp = fingerprint(c.rules);
      const before = plan.chainState.get(c.name);
      plan.chainsAfter.set(c.name, fp);
      if (holds(before, fp, c.rules) && !forceRewrite.has(c.name)) continue;
      plan.newChains.push(c.name);
      if (before === undefined) {
        if (this.staleChains.has(c.name)) plan.reused.add(c.name);
      } else {
        plan.flushes.push(c.name);
      }
      plan.ruleLines.push([c.name, c.rules]);
    }
    for (const c of old?.chains ?? []) {
      if (newNames.has(c.name)) continue;
      plan.objectOwner.set(c.name, key);
      plan.flushes.push(c.name);
      plan.staleNow.set(c.name, now);
      plan.chainsAfter.set(c.name, undefined);
    }
    this.own(key, render?.elements ?? [], plan.dirty, plan.elementOwner);
  }

  /** Element changes of every claim touched (and of failed steps not settled yet), deletes before adds. */
  private planElements(plan: StepPlan): void {
    // Elements a failed transaction meant to change are still to be settled.
    for (const ck of this.unsettled) plan.dirty.add(ck);
    for (const ck of plan.dirty) this.unsettled.add(ck);
    if (plan.deferElements) return;
    for (const ck of plan.dirty) {
      const sep = ck.indexOf('\0');
      const container = ck.slice(0, sep);
      const key = ck.slice(sep + 1);
      const claim = this.owners.first(ck);
      const desired = claim?.element;
      // The element written is its first owner's (also in a later, deferred step of a cold start).
      const first = claim?.owner ?? SKELETON_OWNER;
      if (first !== SKELETON_OWNER) plan.elementOwner.set(ck, first);
      const applied = plan.rebuild ? undefined : this.elements.get(container)?.get(key);
      const body = desired ? flatString(elementBody(desired)) : undefined;
      if (body === applied) continue;
      // A changed value is a delete and an add.
      if (applied !== undefined) plan.elementDeletes.push([container, key]);
      if (desired) plan.elementAdds.push(desired);
      plan.elementsAfter.push([container, key, body]);
    }
  }

  /** The step's lines in an order where each names only what exists by then. */
  private writeStep(tx: NftTransaction, plan: StepPlan): void {
    const { objectOwner, elementOwner, affinityAfter } = plan;
    const owned = (name: string): NftTransaction => tx.ownedBy(objectOwner.get(name));
    const setType = this.family === 'ip6' ? 'ipv6_addr' : 'ipv4_addr';
    for (const name of plan.newSets) {
      owned(name).addSet({ name, type: setType, flags: ['dynamic', 'timeout'], timeoutSeconds: affinityAfter.get(name)! });
    }
    // A set whose timeout changed is deleted and re-added: its add must follow its delete.
    const readded = new Set(plan.setDeletes.filter((s) => affinityAfter.get(s) !== undefined));
    for (const name of plan.newChains) owned(name).addChain(name);
    for (const name of plan.flushes) owned(name).flushChain(name);
    for (const [container, key] of plan.elementDeletes) tx.ownedBy(elementOwner.get(`${container}\0${key}`)).deleteElement(container, key);
    for (const name of plan.setDeletes) owned(name).deleteSet(name);
    for (const name of readded) owned(name).addSet({ name, type: setType, flags: ['dynamic', 'timeout'], timeoutSeconds: affinityAfter.get(name)! });
    for (const [chain, rules] of plan.ruleLines) for (const r of rules) owned(chain).addRule(chain, r);
    for (const e of plan.elementAdds) tx.ownedBy(elementOwner.get(`${e.container}\0${e.key}`)).addElement(e.container, e);
    tx.ownedBy(undefined);
  }

  /** Records what the step made true; called only after the kernel accepted its transaction. */
  private commitStep(plan: StepPlan): void {
    if (!plan.deferElements) for (const ck of plan.dirty) this.unsettled.delete(ck);
    if (plan.rebuild) {
      this.services.clear();
      this.chains.clear();
      this.affinity.clear();
      this.elements.clear();
      this.staleChains.clear();
    }
    if (plan.skeletonPrints) {
      this.skeleton = plan.skeletonPrints;
      this.redeclare = false;
    }
    for (const name of plan.affinityAfter.keys()) this.adoptedSets.delete(name);
    for (const [k, r] of plan.servicesAfter) {
      if (r) this.services.set(k, r);
      else this.services.delete(k);
    }
    applyToMap(this.chains, plan.chainsAfter);
    for (const c of plan.reused) this.staleChains.delete(c);
    for (const [c, t] of plan.staleNow) this.staleChains.set(c, t);
    applyToMap(this.affinity, plan.affinityAfter);
    for (const [container, key, body] of plan.elementsAfter) {
      let m = this.elements.get(container);
      if (!m) this.elements.set(container, (m = new Map()));
      if (body === undefined) m.delete(key);
      else m.set(key, body);
    }
  }

  /** The next skeleton step declares the table, sets and maps again (idempotent `add`s): after adopt(). */
  private redeclare = false;
  /** Taking over a table a previous process left: finishAdoption() removes what nobody claimed. */
  private adopting = false;
  private readonly adoptedSets = new Set<string>();

  /**
   * Takes over a table a previous process left, from what the kernel says it holds: its shared
   * elements are trusted (a sync only changes those that differ), its chains are not (each wanted
   * one is rewritten, the rest are flushed and deleted by finishAdoption). So a restart can rewrite
   * the table in batches of whole services while every service not yet rewritten keeps working on
   * the old rules. False (nothing adopted) when a base chain has other hooks than ours or the table
   * has base chains we do not write: only an atomic rebuild can replace those.
   */
  adopt(state: KernelTableState, skeleton: TableSkeleton): boolean {
    this.forget();
    const ours = new Map(skeleton.chains.map((c) => [c.decl.name, c.decl] as const));
    const prints = new Map<string, string>();
    for (const c of state.chains) {
      const want = ours.get(c.name);
      const listed = state.rules?.get(c.name);
      const fp = listed === undefined ? ADOPTED : LISTED + canonicalChain(listed);
      if (!want) {
        if (c.base) return false;
        this.chains.set(c.name, fp);
        continue;
      }
      const same = want.base
        ? c.base !== undefined && c.base.type === want.base.type && c.base.hook === want.base.hook && c.base.priority === want.base.priority
        : c.base === undefined;
      if (!same) {
        this.forget();
        return false;
      }
      prints.set(c.name, fp);
    }
    for (const [name, timeout] of state.sets) {
      if (!isAffinitySetName(name)) continue;
      this.affinity.set(name, timeout);
      this.adoptedSets.add(name);
    }
    for (const [container, elements] of state.elements) this.elements.set(container, new Map(elements));
    this.skeleton = prints;
    this.redeclare = true;
    this.adopting = true;
    return true;
  }

  /**
   * After every service was written over an adopted table: flushes the chains nobody rewrote
   * (deleted a second later), deletes the elements nobody claims and the affinity sets nobody uses.
   */
  finishAdoption(now: number): SyncStep | null {
    if (!this.adopting) return null;
    const tx = new NftTransaction(this.family);
    const flushed: string[] = [];
    for (const [name, fp] of this.chains) {
      if (!isAdopted(fp)) continue;
      tx.flushChain(name);
      flushed.push(name);
    }
    const orphans: Array<readonly [string, string]> = [];
    for (const [container, elements] of this.elements) {
      for (const key of elements.keys()) {
        if (this.owners.has(`${container}\0${key}`)) continue;
        tx.deleteElement(container, key);
        orphans.push([container, key]);
      }
    }
    const sets = [...this.adoptedSets];
    for (const name of sets) tx.deleteSet(name);
    return {
      tx,
      commit: () => {
        for (const name of flushed) {
          this.chains.delete(name);
          this.staleChains.set(name, now);
        }
        for (const [container, key] of orphans) this.elements.get(container)?.delete(key);
        for (const name of sets) this.affinity.delete(name);
        this.adoptedSets.clear();
        this.adopting = false;
      },
    };
  }

  /** Elements whose claims changed in a transaction not committed yet (it may fail: then the next one settles them). */
  private readonly unsettled = new Set<string>();

  /** owner → the elements it claims now. */
  private readonly claims = new Map<string, readonly PlacedElement[]>();

  /**
   * Moves `owner`'s claims to `after` and marks every element touched. Claims change at once (not
   * on commit): they are what the services want, whatever the kernel holds; a failed transaction
   * leaves the committed elements as they were, and the next diff sees the difference again.
   */
  private own(owner: string, after: readonly PlacedElement[], dirty: Set<string>, touchedBy?: Map<string, string>): void {
    const before = this.claims.get(owner) ?? [];
    if (after.length === 0) this.claims.delete(owner);
    else this.claims.set(owner, after);
    for (const e of before) {
      const ck = `${e.container}\0${e.key}`;
      this.owners.remove(ck, owner);
      dirty.add(ck);
      touchedBy?.set(ck, owner);
    }
    for (const e of after) {
      const ck = `${e.container}\0${e.key}`;
      this.owners.add(ck, owner, e);
      dirty.add(ck);
      touchedBy?.set(ck, owner);
    }
  }
}
