import { parseSavedRule, type RuleMatch, type RuleTarget, type SavedRule } from './saved-rule.js';

/**
 * A SavedRule whose matches are parsed on first use: reading a large node's iptables-save stays close
 * to the cost of splitting its lines, and only the rules a trace walks are tokenized.
 */
export class LazySavedRule implements SavedRule {
  private parsed?: SavedRule;

  constructor(
    readonly table: string,
    readonly chain: string,
    readonly raw: string,
  ) {}

  private get rule(): SavedRule {
    // A line that does not tokenize (an unterminated quote) is kept as a rule nothing matches.
    this.parsed ??= parseSavedRule(this.table, this.raw) ?? { table: this.table, chain: this.chain, raw: this.raw, matches: [], unknown: [this.raw] };
    return this.parsed;
  }

  get comment(): string | undefined {
    return this.rule.comment;
  }

  get matches(): readonly RuleMatch[] {
    return this.rule.matches;
  }

  get target(): RuleTarget | undefined {
    return this.rule.target;
  }

  get unknown(): readonly string[] {
    return this.rule.unknown;
  }
}
