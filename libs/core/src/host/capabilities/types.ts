/** What the node offers, as found by detectHostCapabilities. Every verdict carries its evidence. */
export interface ToolInfo {
  readonly present: boolean;
  /** Version as printed by the tool, when present. */
  readonly version?: string;
}

export type IptablesVariant = 'nft' | 'legacy';

export interface HostCapabilities {
  readonly kernelRelease: string;
  /**
   * `schedulers`: the IPVS schedulers the kernel evidence shows (`rr`, `mh`, …), when it can tell;
   * a backend checks its configured scheduler against it (upstream's CanUseIPVSProxier).
   */
  readonly ipvs: { readonly available: boolean; readonly reason: string; readonly schedulers?: readonly string[] };
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
}
