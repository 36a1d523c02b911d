import type { CommandExecutor } from '../command-executor.js';
import type { KernelEvidence } from './kernel-evidence.js';
import type { ToolProbe } from './tool-probe.js';

/** What the node offers, as found by detectHostCapabilities. Every verdict carries its evidence. */
export interface ToolInfo {
  readonly present: boolean;
  /** Version as printed by the tool, when present. */
  readonly version?: string;
}

export type IptablesVariant = 'nft' | 'legacy';

/**
 * A proxy mode's verdict on the host. `schedulers` (IPVS): the schedulers the kernel evidence shows
 * (`rr`, `mh`, …), when it can tell; the backend checks its configured scheduler against it.
 */
export interface ModeCapability {
  readonly available: boolean;
  readonly reason: string;
  readonly schedulers?: readonly string[];
}

/** The tools detection probes with `--version`. */
export type ProbedTool = 'iptables' | 'ip6tables' | 'ipset' | 'ipvsadm' | 'nft' | 'conntrack';

/**
 * What detection read on the host, for backends (built-in or third-party) to judge whether their
 * mode can run: the kernel's files (modules, config, /proc/net/ip_vs) and each tool's --version.
 */
export interface HostEvidence {
  readonly kernel: KernelEvidence;
  readonly tools: { readonly [tool in ProbedTool]: ToolProbe };
}

/**
 * A mode's verdict from the evidence, given to detectHostCapabilities by the host app (the built-in
 * backends export theirs). It may run read-only probes with `exec` (nftables: `nft --check`).
 */
export type ModeVerdict = (
  evidence: HostEvidence,
  exec: CommandExecutor,
  env: Readonly<Record<string, string | undefined>>,
) => ModeCapability | Promise<ModeCapability>;

export interface HostCapabilities {
  readonly kernelRelease: string;
  /**
   * The IPVS backend's verdict, filled by the host app from backend-ipvs' `ipvsVerdict`.
   * @deprecated Kept for kube-proxy.backend/v1; a backend judges its own mode from `evidence`.
   */
  readonly ipvs: { readonly available: boolean; readonly reason: string; readonly schedulers?: readonly string[] };
  /**
   * The nftables backend's verdict, filled by the host app from backend-nftables' `nftablesVerdict`.
   * @deprecated Kept for kube-proxy.backend/v1; a backend judges its own mode from `evidence`.
   */
  readonly nftables: { readonly available: boolean; readonly reason: string };
  readonly tools: {
    readonly iptables: ToolInfo;
    readonly ip6tables: ToolInfo;
    readonly ipset: ToolInfo;
    readonly ipvsadm: ToolInfo;
    readonly nft: ToolInfo;
    readonly conntrack: ToolInfo;
  };
  /**
   * The iptables variant to use: the one that already holds the node's rules (as kubelet/upstream's
   * iptables-wrapper decide), else the system default. Undefined when no iptables binary exists.
   */
  readonly iptablesVariant?: IptablesVariant;
  readonly iptablesVariantReason: string;
  /** Whether `MASQUERADE --random-fully` is supported (iptables >= 1.6.2). */
  readonly iptablesRandomFully: boolean;
  /** What detection read, for a backend's own verdict (absent when the host was not probed, e.g. in tests). */
  readonly evidence?: HostEvidence;
}
