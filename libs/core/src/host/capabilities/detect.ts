import type { CommandExecutor } from '../command-executor.js';
import type { HostFs } from '../host-fs.js';
import { nullLogger, type Logger } from '../logger.js';
import { decideIptablesVariant } from './iptables-variant.js';
import { ipvsVerdict } from './ipvs-verdict.js';
import { gatherKernelEvidence } from './kernel-evidence.js';
import { nftablesVerdict } from './nftables-verdict.js';
import { probeTool, type ToolProbe } from './tool-probe.js';
import type { HostCapabilities, IptablesVariant, ToolInfo } from './types.js';
import { versionAtLeast, parseVersion } from './version.js';

export interface DetectOptions {
  /** Environment to read overrides from (KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK); process.env by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** `MASQUERADE --random-fully` arrived in iptables 1.6.2. */
export const MIN_IPTABLES_RANDOM_FULLY = '1.6.2';

/**
 * What this node can run, from evidence real nodes have: /proc and /lib/modules files, the kernel
 * config, and the tools' own --version output. It only reads: no modprobe, no test rules, no links.
 */
export async function detectHostCapabilities(
  fs: HostFs,
  exec: CommandExecutor,
  logger: Logger = nullLogger,
  options: DetectOptions = {},
): Promise<HostCapabilities> {
  const [kernel, iptables, ip6tables, ipset, ipvsadm, nft, conntrack] = await Promise.all([
    gatherKernelEvidence(fs),
    probeTool(exec, 'iptables'),
    probeTool(exec, 'ip6tables'),
    probeTool(exec, 'ipset'),
    probeTool(exec, 'ipvsadm'),
    probeTool(exec, 'nft'),
    probeTool(exec, 'conntrack'),
  ]);
  for (const [name, t] of Object.entries({ iptables, ip6tables, ipset, ipvsadm, nft, conntrack })) {
    logger.debug('Probed tool', { tool: name, present: t.present, version: t.version, banner: t.banner });
  }

  const ipvs = ipvsVerdict(kernel, ipset, ipvsadm);
  const nftables = await nftablesVerdict(kernel, nft, exec, options.env ?? process.env);

  let iptablesVariant: IptablesVariant | undefined;
  let iptablesVariantReason: string;
  if (iptables.present) {
    const systemDefault = systemIptablesVariant(iptables);
    const decision = await decideIptablesVariant(exec, systemDefault);
    iptablesVariant = decision.variant;
    iptablesVariantReason = decision.reason;
  } else {
    iptablesVariantReason = 'iptables is not installed';
  }

  const caps: HostCapabilities = {
    kernelRelease: kernel.release,
    ipvs,
    nftables,
    tools: { iptables: info(iptables), ip6tables: info(ip6tables), ipset: info(ipset), ipvsadm: info(ipvsadm), nft: info(nft), conntrack: info(conntrack) },
    ...(iptablesVariant ? { iptablesVariant } : {}),
    iptablesVariantReason,
    iptablesRandomFully: iptables.present && versionAtLeast(parseVersion(iptables.version ?? ''), MIN_IPTABLES_RANDOM_FULLY),
  };
  logger.verbose('Detected host capabilities', {
    kernel: caps.kernelRelease,
    ipvs: caps.ipvs.reason,
    nftables: caps.nftables.reason,
    iptablesVariant: caps.iptablesVariant,
    iptablesVariantReason,
  });
  return caps;
}

/** "iptables v1.8.9 (nf_tables)" → nft; "(legacy)", or a pre-1.8 iptables without a suffix → legacy. */
export function systemIptablesVariant(iptables: ToolProbe): IptablesVariant {
  return /\(nf_tables\)/.test(iptables.banner ?? '') ? 'nft' : 'legacy';
}

function info(t: ToolProbe): ToolInfo {
  return t.version ? { present: t.present, version: t.version } : { present: t.present };
}
