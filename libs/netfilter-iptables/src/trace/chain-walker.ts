import { canonicalIP, formatHostPort, parseIP } from '@kube-proxy/core';
import { applyMark } from './mark-target.js';
import { ruleMatches, type PacketView } from './rule-match.js';
import type { RuleTarget, SavedRule } from './saved-rule.js';
import { savedChain, type SavedTables } from './saved-tables.js';
import type { IptablesDnatChoice, IptablesRuleRef, IptablesStepAction, IptablesTraceStep } from './trace-types.js';

/** The chains every packet enters; in them only jumps to kube-proxy's chains are followed. */
export const BUILTIN_HOOKS = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

/** Jumps deeper than this are a loop (the kernel refuses loops; a hand-made dump may not). */
const MAX_DEPTH = 64;

/** How a chain (or a rule) ended for the packet. */
type Outcome = 'terminal' | 'return' | 'continue';

export interface WalkerMarks {
  readonly masquerade: number;
  readonly drop: number;
}

/**
 * Walks one packet through chains like the kernel, but visiting every branch of a `-m statistic`
 * jump (as upstream's test tracer does) and weighing each with its real probability.
 */
export class ChainWalker {
  readonly steps: IptablesTraceStep[] = [];
  readonly dnat: IptablesDnatChoice[] = [];
  redirect?: { port: number; ref: IptablesRuleRef };
  /** The first REJECT/DROP, which decides the verdict. */
  refused?: { verdict: 'REJECT' | 'DROP'; ref: IptablesRuleRef };
  masqueradeRule?: IptablesRuleRef;
  dropMarkRule?: IptablesRuleRef;

  constructor(
    private readonly tables: SavedTables,
    readonly view: PacketView,
    private readonly marks: WalkerMarks,
  ) {}

  /** Runs `table/chain`; true when a terminal target (DNAT, ACCEPT, DROP …) ended the packet's walk. */
  run(table: string, chain: string): boolean {
    return this.runChain(table, chain, 1, 0) === 'terminal';
  }

  private runChain(table: string, chainName: string, probability: number, depth: number): 'terminal' | 'return' | 'end' {
    const chain = savedChain(this.tables, table, chainName);
    if (chain === undefined || depth > MAX_DEPTH) return 'end';
    const builtin = BUILTIN_HOOKS.has(chainName);
    let remaining = probability;
    for (const rule of chain.rules) {
      const target = rule.target;
      if (target === undefined || (builtin && !target.name.startsWith('KUBE-'))) continue;
      const result = ruleMatches(rule, this.view);
      if (result === 'no') continue;
      if (result === 'not-understood') {
        if (chainName.startsWith('KUBE-')) this.notUnderstood(rule, remaining);
        continue;
      }
      const p = branchProbability(rule);
      const outcome = this.applyTarget(rule, target, p === undefined ? remaining : remaining * p, depth);
      if (p !== undefined) {
        // Visit every branch: the next rules see the connections this branch did not take.
        remaining *= 1 - p;
        continue;
      }
      if (outcome !== 'continue') return outcome;
    }
    return 'end';
  }

  private applyTarget(rule: SavedRule, target: RuleTarget, probability: number, depth: number): Outcome {
    switch (target.name) {
      case 'ACCEPT':
        this.step(rule, 'accept', probability);
        return 'terminal';
      case 'DROP':
      case 'REJECT':
        this.step(rule, target.name === 'DROP' ? 'drop' : 'reject', probability);
        this.refused ??= { verdict: target.name, ref: refOf(rule) };
        return 'terminal';
      case 'DNAT':
        return this.applyDnat(rule, target, probability);
      case 'REDIRECT':
        return this.applyRedirect(rule, target, probability);
      case 'RETURN':
        this.step(rule, 'return', probability);
        return 'return';
      case 'MARK':
        this.applyMarkTarget(rule, target, probability);
        return 'continue';
      default:
        return this.applyJump(rule, target, probability, depth);
    }
  }

  private applyJump(rule: SavedRule, target: RuleTarget, probability: number, depth: number): Outcome {
    if (savedChain(this.tables, rule.table, target.name) === undefined && !isMarkChain(target.name)) {
      // MASQUERADE, SNAT, LOG, CT … and jumps to chains the dump does not hold: no effect here.
      return 'continue';
    }
    const before = this.view.mark;
    const action: IptablesStepAction =
      target.name === 'KUBE-MARK-MASQ' ? 'masquerade-mark' : target.name === 'KUBE-MARK-DROP' ? 'drop-mark' : target.goto ? 'goto' : 'jump';
    this.step(rule, action, probability, target.name);
    const outcome = this.runChain(rule.table, target.name, probability, depth + 1);
    if (target.name === 'KUBE-MARK-MASQ') this.markedBy(rule, before, this.marks.masquerade, 'masquerade');
    if (target.name === 'KUBE-MARK-DROP') this.markedBy(rule, before, this.marks.drop, 'drop');
    if (outcome === 'terminal') return 'terminal';
    // A goto's chain returns to the chain that called this one.
    return target.goto ? 'return' : 'continue';
  }

  /** After a jump to a mark chain: the jump is the rule that set the mark (set it if the chain is absent). */
  private markedBy(rule: SavedRule, before: number, bit: number, which: 'masquerade' | 'drop'): void {
    if ((before & bit) !== 0) return;
    this.view.mark = (this.view.mark | bit) >>> 0;
    if (which === 'masquerade') this.masqueradeRule = refOf(rule);
    else this.dropMarkRule = refOf(rule);
  }

  private applyMarkTarget(rule: SavedRule, target: RuleTarget, probability: number): void {
    const before = this.view.mark;
    this.view.mark = applyMark(before, target);
    const setsMasq = (before & this.marks.masquerade) === 0 && (this.view.mark & this.marks.masquerade) !== 0;
    const setsDrop = (before & this.marks.drop) === 0 && (this.view.mark & this.marks.drop) !== 0;
    this.step(rule, setsMasq ? 'masquerade-mark' : setsDrop ? 'drop-mark' : 'mark', probability);
    if (setsMasq && rule.chain !== 'KUBE-MARK-MASQ') this.masqueradeRule ??= refOf(rule);
    if (setsDrop && rule.chain !== 'KUBE-MARK-DROP') this.dropMarkRule ??= refOf(rule);
  }

  private applyDnat(rule: SavedRule, target: RuleTarget, probability: number): Outcome {
    const parsed = parseDnatDestination(target.options.get('--to-destination') ?? '', this.view.destPort);
    if (parsed === undefined) {
      this.step(rule, 'not-understood', probability, undefined, `DNAT destination not understood`);
      return 'continue';
    }
    const destination = formatHostPort(parsed.ip, parsed.port);
    this.step(rule, 'dnat', probability, undefined, `DNAT to ${destination}`);
    this.dnat.push({ destination, ...parsed, probability, chain: rule.chain, rule: rule.raw, ...commentOf(rule) });
    return 'terminal';
  }

  private applyRedirect(rule: SavedRule, target: RuleTarget, probability: number): Outcome {
    const port = Number((target.options.get('--to-ports') ?? '').split(/[-:]/)[0]);
    if (!Number.isInteger(port) || port <= 0) return 'continue';
    this.step(rule, 'redirect', probability, undefined, `redirected to local port ${port}`);
    this.redirect ??= { port, ref: refOf(rule) };
    return 'terminal';
  }

  private notUnderstood(rule: SavedRule, probability: number): void {
    this.step(rule, 'not-understood', probability, undefined, `not understood (${rule.unknown.join(', ')}); treated as not matching`);
  }

  private step(rule: SavedRule, action: IptablesStepAction, probability: number, target?: string, note?: string): void {
    this.steps.push({
      table: rule.table,
      chain: rule.chain,
      rule: rule.raw,
      ...commentOf(rule),
      action,
      ...(target !== undefined ? { target } : {}),
      probability,
      ...(note !== undefined ? { note } : {}),
    });
  }
}

function isMarkChain(name: string): boolean {
  return name === 'KUBE-MARK-MASQ' || name === 'KUBE-MARK-DROP';
}

/** The product of the rule's `-m statistic` probabilities, or undefined when it has none. */
function branchProbability(rule: SavedRule): number | undefined {
  let p: number | undefined;
  for (const m of rule.matches) if (m.kind === 'statistic') p = (p ?? 1) * m.probability;
  return p;
}

export function refOf(rule: SavedRule): IptablesRuleRef {
  return { table: rule.table, chain: rule.chain, rule: rule.raw, ...commentOf(rule) };
}

function commentOf(rule: SavedRule): { comment?: string } {
  return rule.comment !== undefined ? { comment: rule.comment } : {};
}

/** `IP`, `IP:PORT`, `[IPv6]:PORT`, `IPv6`, ranges (`IP-IP:PORT-PORT`, first taken); the port defaults to the packet's. */
export function parseDnatDestination(text: string, defaultPort: number): { ip: string; port: number } | undefined {
  let host = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1] as string;
    portText = bracketed[2];
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [host, portText] = text.split(':') as [string, string];
  }
  const ip = canonicalIP((host.split('-')[0] ?? '').trim());
  const port = portText === undefined ? defaultPort : Number(portText.split('-')[0]);
  if (ip === undefined || parseIP(ip) === undefined || !Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
  return { ip, port };
}
