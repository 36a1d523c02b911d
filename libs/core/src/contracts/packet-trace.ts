import type { CommandExecutor } from '../host/command-executor.js';
import type { IPFamily } from '../semantics/model/protocol.js';

/*
 * `kube-proxy trace` / `explain` and the running proxy's /debug endpoints: a mode that can say where a
 * packet goes implements ModeTracer over the rules it (or upstream's kube-proxy) programs. The meaning
 * of the answer (verdicts, endpoint spelling, masquerade) is fixed here, so every mode — plugins
 * included — answers in the same terms; `-o json` prints a PacketTrace as it is.
 */

export type TraceProtocol = 'TCP' | 'UDP' | 'SCTP';

/** The first packet of a new connection, as the kernel sees it arrive. */
export interface TracePacket {
  readonly family: IPFamily;
  readonly protocol: TraceProtocol;
  /** Canonical source address. */
  readonly sourceIP: string;
  readonly sourcePort?: number;
  /** Canonical destination address. */
  readonly destIP: string;
  readonly destPort: number;
  /**
   * True when the source is one of the node's own addresses: the packet is generated on the node and
   * takes the OUTPUT path; otherwise it arrives from outside or from a pod (PREROUTING).
   */
  readonly locallyGenerated: boolean;
  /** The input interface (PREROUTING only), for interface-based local-traffic detection. */
  readonly inInterface?: string;
}

/** The node the rules are on. */
export interface TraceNode {
  readonly name: string;
  /** Every address that is the node's own (addrtype LOCAL, fib daddr type local), canonical. */
  readonly addresses: readonly string[];
}

/**
 * - DNAT: sent to one of `endpoints` (or, in userspace mode, to the proxy socket that forwards to them);
 * - REJECT / DROP: refused or silently dropped by a Service rule;
 * - ACCEPT: no Service rule applies; the packet passes unchanged.
 */
export type TraceVerdict = 'DNAT' | 'REJECT' | 'DROP' | 'ACCEPT';

/** One step of the path: a rule that took effect (or the kernel object that decided). */
export interface TraceStep {
  /** Where it is, e.g. `nat/KUBE-SERVICES` (iptables), `ip kube-proxy/services` (nftables), `ipvs 10.96.0.10:80/TCP`. */
  readonly where: string;
  /** The rule or element as the kernel tool prints it. */
  readonly rule: string;
  /** The Service port that owns the step (`ns/name:portName`), when the rule says so. */
  readonly service?: string;
  /** What the step did, in words (e.g. "marked for masquerade: traffic from outside the cluster"). */
  readonly note?: string;
}

export interface TraceEndpointChoice {
  /** `IP:PORT` or `[IPv6]:PORT`. */
  readonly endpoint: string;
  /** The chance that a new connection is sent there (affinity aside), 0..1. */
  readonly probability: number;
}

/** Where a packet goes and why. `-o json` is this object; its field names are a contract. */
export interface PacketTrace {
  readonly verdict: TraceVerdict;
  /** Every endpoint the packet may be sent to, sorted (string order); [] unless the verdict is DNAT. */
  readonly endpoints: readonly string[];
  /** The same endpoints with their probabilities, in rule order. */
  readonly choices: readonly TraceEndpointChoice[];
  /** True when the packet is marked for masquerade (SNAT) on the way. */
  readonly masquerade: boolean;
  /** Why it is (or is not) masqueraded, in words. */
  readonly masqueradeReason: string;
  /** The Service port that matched, `namespace/name:portName` (portName empty for an unnamed port), or null. */
  readonly service: string | null;
  readonly path: readonly TraceStep[];
  /** One sentence, in Kubernetes terms. */
  readonly reason: string;
}

/** A mode's kernel object that belongs to a Service (for `explain`). */
export interface KernelObject {
  /** e.g. `chain`, `map element`, `set element`, `virtual server`, `ipset entry`, `proxy socket`. */
  readonly kind: string;
  /** e.g. `nat/KUBE-SVC-…`, `ip kube-proxy/service-…`, `TCP 10.96.0.10:80`. */
  readonly name: string;
  /** Rules (or real servers, elements) it holds. */
  readonly rules: number;
  /** Endpoints it sends to, when it sends to any (`IP:PORT`). */
  readonly endpoints?: readonly string[];
  /**
   * The Service port it belongs to (`namespace/name:portName`), when the object is one port's (a
   * service or endpoint chain, a virtual server): lets `explain` name the port in a difference.
   */
  readonly servicePort?: string;
}

/**
 * The rules of one mode and one IP family, parsed: either read from the host's kernel (`--live`) or
 * from the mode's own --dry-run output. Opaque to everyone but the tracer that made it.
 */
export interface RuleSnapshot {
  readonly mode: string;
  readonly family: IPFamily;
  /** Where it came from, in words (`iptables-legacy-save`, `--dry-run output`, …). */
  readonly source: string;
}

/** Reading the kernel found nothing of the mode: what was looked for, for the error message. */
export interface NoRulesFound {
  readonly found: false;
  readonly lookedFor: string;
}

/** How a mode answers "where does this packet go". */
export interface ModeTracer {
  readonly mode: string;
  /**
   * Reads this host's current rules for `family` with the kernel tools (never changing them). Also
   * understands the layouts upstream's kube-proxy writes for this mode (v1.28 and later).
   */
  readLive(executor: CommandExecutor, family: IPFamily): Promise<RuleSnapshot | NoRulesFound>;
  /** The rules of one family's --dry-run block (the text after the `# sync …` header). */
  fromDryRun(text: string, family: IPFamily): RuleSnapshot;
  trace(snapshot: RuleSnapshot, packet: TracePacket, node: TraceNode): PacketTrace;
  /** The snapshot's kernel objects that belong to Service `namespace/name`. */
  objectsOf(snapshot: RuleSnapshot, service: string): readonly KernelObject[];
}

/** Type guard for readLive's result. */
export function isNoRulesFound(value: RuleSnapshot | NoRulesFound): value is NoRulesFound {
  return (value as NoRulesFound).found === false;
}
