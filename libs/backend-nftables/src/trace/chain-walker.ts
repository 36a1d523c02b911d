/*
 * Runs a packet through chains the way nf_tables does: jump comes back, goto does not, return goes
 * back to the caller, accept ends the base chain, drop and reject end the packet. A random choice
 * (`numgen random mod N`) forks the walk: every branch is followed, each with its share of the
 * probability, so the trace lists every endpoint a new connection may reach.
 */
import { formatHostPort, type TraceStep } from '@kube-proxy/core';
import { cloneState, type EvalEnv, type FlowState } from './flow-state.js';
import { evaluateRule, type ElementHit, type RuleOutcome, type RuleResult } from './rule-eval.js';
import { chainOwner, commentOwner, verdictTarget } from './service-names.js';

/** Deeper than any chain graph kube-proxy writes (base → dispatch → service → endpoint); a loop is a bug. */
const MAX_DEPTH = 16;

export interface RuleRef {
  readonly chain: string;
  readonly rule: string;
}

/** One way the packet may go. */
export interface Branch {
  state: FlowState;
  probability: number;
  steps: TraceStep[];
  endpoint?: string;
  verdict?: 'drop' | 'reject';
  /** The rule that dropped or rejected, and the last map element the packet hit before it. */
  decidedBy?: RuleRef;
  lastHit?: ElementHit;
  /** The rule that asked for masquerade (set the 0x4000 mark, or ran `masquerade`). */
  masqueradeCause?: RuleRef;
  masqueraded: boolean;
  /** Every Service port a step named, in path order. */
  owners: string[];
}

export type WalkEnd = 'return' | 'accept' | 'drop';
export interface Walked {
  readonly branch: Branch;
  readonly end: WalkEnd;
}

export function newBranch(state: FlowState): Branch {
  return { state, probability: 1, steps: [], masqueraded: false, owners: [] };
}

function fork(branch: Branch, share: number): Branch {
  return { ...branch, state: cloneState(branch.state), probability: branch.probability * share, steps: [...branch.steps], owners: [...branch.owners] };
}

function elementText(hit: ElementHit): string {
  const e = hit.element;
  return `${e.key}${e.comment !== undefined ? ` comment "${e.comment}"` : ''}${e.value !== undefined ? ` : ${e.value}` : ''}`;
}

export class ChainWalker {
  constructor(private readonly env: EvalEnv) {}

  private where(chain: string): string {
    return `${this.env.ruleset.family} kube-proxy/${chain}`;
  }

  private record(branch: Branch, chain: string, rule: string, note?: string): void {
    const owner = chainOwner(chain)?.servicePort;
    if (owner !== undefined) branch.owners.push(owner);
    branch.steps.push({ where: this.where(chain), rule, ...(owner !== undefined ? { service: owner } : {}), ...(note !== undefined ? { note } : {}) });
  }

  private recordHits(branch: Branch, hits: readonly ElementHit[]): void {
    for (const hit of hits) {
      const owner = commentOwner(hit.element.comment) ?? chainOwner(verdictTarget(hit.element.value) ?? '')?.servicePort;
      if (owner !== undefined) branch.owners.push(owner);
      branch.lastHit = hit;
      const where = `${this.env.ruleset.family} kube-proxy map ${hit.container} element`;
      branch.steps.push({ where, rule: elementText(hit), ...(owner !== undefined ? { service: owner } : {}) });
    }
  }

  /** Runs `chain` from its first rule. `caller` is the rule that jumped here (masquerade causes). */
  run(chain: string, branch: Branch, depth = 0, caller?: RuleRef): Walked[] {
    if (depth > MAX_DEPTH) throw new Error(`chain nesting deeper than ${MAX_DEPTH} at ${chain}`);
    if (!this.env.ruleset.chains.has(chain)) {
      this.record(branch, chain, '', 'the rules send packets to a chain that does not exist; assumed to return');
      return [{ branch, end: 'return' }];
    }
    return this.runFrom(chain, 0, branch, depth, caller);
  }

  private runFrom(chain: string, start: number, branch: Branch, depth: number, caller?: RuleRef): Walked[] {
    const rules = this.env.ruleset.chains.get(chain)!.rules;
    for (let i = start; i < rules.length; i++) {
      const rule = rules[i]!;
      const markBefore = branch.state.mark;
      const result = evaluateRule(rule, branch.state, this.env);
      if (result.outcome.kind === 'nomatch') {
        if (result.affinity) this.record(branch, chain, rule, 'session affinity: a client seen before goes back to its endpoint; a new one is balanced below');
        continue;
      }
      this.recordHits(branch, result.hits);
      this.noteMasquerade(branch, result, markBefore, { chain, rule }, caller);
      const walked = this.outcome(chain, i, rule, result, branch, depth, caller);
      if (walked !== undefined) return walked;
    }
    return [{ branch, end: 'return' }];
  }

  private noteMasquerade(branch: Branch, result: RuleResult, markBefore: number, here: RuleRef, caller?: RuleRef): void {
    if (result.masqueraded) branch.masqueraded = true;
    // kube-proxy marks packets for one purpose only, masquerade (0x4000 unless --iptables-masquerade-bit
    // says otherwise), so any bit set by `mark set mark or …` is that mark.
    const newlyMarked = result.marked && markBefore === 0 && branch.state.mark !== 0;
    if (branch.masqueradeCause !== undefined || !(newlyMarked || result.masqueraded)) return;
    // A helper chain that only sets the mark (mark-for-masquerade) stands for the rule that jumped to it.
    branch.masqueradeCause = newlyMarked && caller !== undefined && /mark/.test(here.chain) ? caller : here;
  }

  /** What a matched rule does; undefined when the chain goes on with its next rule. */
  private outcome(chain: string, i: number, rule: string, result: RuleResult, branch: Branch, depth: number, caller?: RuleRef): Walked[] | undefined {
    const o: RuleOutcome = result.outcome;
    switch (o.kind) {
      case 'next':
        this.record(branch, chain, rule);
        return undefined;
      case 'unknown':
        this.record(branch, chain, rule, `not understood by the tracer ("${o.rest}"); assumed not to match`);
        return undefined;
      case 'verdict':
        this.record(branch, chain, rule);
        if (o.verdict === 'return') return [{ branch, end: 'return' }];
        if (o.verdict === 'accept') return [{ branch, end: 'accept' }];
        branch.verdict = o.verdict;
        branch.decidedBy = { chain, rule };
        return [{ branch, end: 'drop' }];
      case 'jump':
        this.record(branch, chain, rule);
        return this.jump(chain, i, rule, o.mode, o.chain, branch, depth, caller);
      case 'dnat':
        this.record(branch, chain, rule);
        this.dnat(branch, o.ip, o.port);
        return [{ branch, end: 'accept' }];
      case 'endpoints':
        this.record(branch, chain, rule, `one of ${o.endpoints.length} endpoints, each with probability 1/${o.endpoints.length}`);
        return o.endpoints.map((e) => {
          const b = fork(branch, 1 / o.endpoints.length);
          this.dnat(b, e.ip, e.port);
          return { branch: b, end: 'accept' as const };
        });
      case 'chains':
        this.record(branch, chain, rule, `one of ${o.chains.length} endpoint chains, each with probability 1/${o.chains.length}`);
        // `numgen … vmap { … : goto X }`: each branch leaves this chain the way a goto does.
        return o.chains.flatMap((target) => this.run(target, fork(branch, 1 / o.chains.length), depth + 1, { chain, rule }));
      default:
        return undefined;
    }
  }

  private jump(chain: string, i: number, rule: string, mode: 'jump' | 'goto', target: string, branch: Branch, depth: number, caller?: RuleRef): Walked[] {
    const out: Walked[] = [];
    for (const w of this.run(target, branch, depth + 1, { chain, rule })) {
      if (w.end !== 'return') out.push(w);
      else if (mode === 'goto') out.push(w);
      else out.push(...this.runFrom(chain, i + 1, w.branch, depth, caller));
    }
    return out;
  }

  private dnat(branch: Branch, ip: string, port: number | undefined): void {
    const p = port ?? branch.state.dport;
    branch.endpoint = formatHostPort(ip, p);
    branch.state.daddr = ip;
    branch.state.dport = p;
    branch.state.dnatted = true;
  }
}
