/* The packet as the rules see it at one point of its path, and what the tracer knows of the node. */
import type { NftRuleset } from './nft-ruleset.js';

export interface FlowState {
  saddr: string;
  daddr: string;
  /** Lower case, as nft spells it: tcp, udp, sctp. */
  proto: string;
  sport?: number;
  dport: number;
  /** The packet mark (kube-proxy's masquerade bit is 0x4000). */
  mark: number;
  iif?: string;
  /** True once a DNAT rewrote the destination (`ct status dnat`). */
  dnatted: boolean;
}

export interface EvalEnv {
  readonly ruleset: NftRuleset;
  /** Canonical addresses of the node (fib … type local). */
  readonly nodeIPs: ReadonlySet<string>;
}

export function cloneState(state: FlowState): FlowState {
  return { ...state };
}
