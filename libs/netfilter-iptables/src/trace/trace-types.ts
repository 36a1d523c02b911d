import type { TracePacket } from '@kube-proxy/core';

/** What a step of an iptables trace did. */
export type IptablesStepAction =
  | 'jump'
  | 'goto'
  | 'return'
  | 'mark'
  | 'masquerade-mark'
  | 'drop-mark'
  | 'dnat'
  | 'redirect'
  | 'accept'
  | 'drop'
  | 'reject'
  /** A rule with matches this tracer does not understand, treated as not matching. */
  | 'not-understood';

export interface IptablesTraceStep {
  readonly table: string;
  readonly chain: string;
  /** The rule as iptables-save prints it. */
  readonly rule: string;
  readonly comment?: string;
  readonly action: IptablesStepAction;
  /** The jump/goto target chain, when the step is a jump or goto. */
  readonly target?: string;
  /** The chance that a new connection takes this step (below 1 under `-m statistic`). */
  readonly probability: number;
  readonly note?: string;
}

export interface IptablesDnatChoice {
  /** `IP:PORT` or `[IPv6]:PORT`, canonical IP. */
  readonly destination: string;
  readonly ip: string;
  readonly port: number;
  /** The chance a new connection is sent there: p_i × Π(1−p_j) of the branches before it. */
  readonly probability: number;
  readonly chain: string;
  readonly rule: string;
  readonly comment?: string;
}

export interface IptablesRuleRef {
  readonly table: string;
  readonly chain: string;
  readonly rule: string;
  readonly comment?: string;
}

export type IptablesVerdict = 'DNAT' | 'REJECT' | 'DROP' | 'ACCEPT';

/** The path of one packet through nat and filter, as the kernel would take it. */
export interface IptablesTrace {
  /** Every rule that took effect, in order (branches of probability jumps included). */
  readonly steps: readonly IptablesTraceStep[];
  /** The DNAT destinations, in rule order, with their probabilities. */
  readonly dnat: readonly IptablesDnatChoice[];
  /** A REDIRECT to a local port (userspace mode's proxy socket). */
  readonly redirect?: { readonly port: number; readonly ref: IptablesRuleRef };
  readonly verdict: IptablesVerdict;
  /** Which table decided a REJECT/DROP (or made the DNAT/REDIRECT); undefined for ACCEPT by default. */
  readonly decidedBy?: IptablesRuleRef;
  /** True when the masquerade mark is set on the way (nat POSTROUTING / KUBE-POSTROUTING acts on it). */
  readonly masquerade: boolean;
  /** The rule that set the masquerade mark (the jump to KUBE-MARK-MASQ, or the MARK rule). */
  readonly masqueradeRule?: IptablesRuleRef;
  /** The filter chains the packet took: INPUT, FORWARD, OUTPUT (then INPUT for a local destination). */
  readonly filterHooks: readonly string[];
  /** The nat chain the packet entered: PREROUTING or OUTPUT. */
  readonly natHook: 'PREROUTING' | 'OUTPUT';
  /** The destination the filter table saw (after DNAT to the first choice). */
  readonly filterDestination: { readonly ip: string; readonly port: number };
}

export interface IptablesTraceOptions {
  /**
   * `-m set --match-set NAME FLAGS` (IPVS mode's ipsets): whether the match succeeds for the packet,
   * negation included (`negated` says the rule wrote `!`). Without it a set match never matches.
   */
  readonly matchSet?: (set: string, flags: string, negated: boolean, packet: TracePacket) => boolean;
  /** The masquerade mark bit, when not read from KUBE-MARK-MASQ (default 0x4000). */
  readonly masqueradeMark?: number;
  /** The drop mark bit of old layouts (KUBE-MARK-DROP), when not read from the chain (default 0x8000). */
  readonly dropMark?: number;
}
