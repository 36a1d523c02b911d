import type { CommandExecutor } from '../command-executor.js';
import type { HostFs } from '../host-fs.js';
import { nullLogger, type Logger } from '../logger.js';
import { decideIptablesVariant } from './iptables-variant.js';
import { gatherKernelEvidence } from './kernel-evidence.js';
import { probeTool, type ToolProbe } from './tool-probe.js';
import type { HostCapabilities, HostEvidence, IptablesVariant, ModeCapability, ModeVerdict, ToolInfo } from './types.js';
import { versionAtLeast, parseVersion } from './version.js';

export interface DetectOptions {
  /** Environment the verdicts read overrides from (KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK); process.env by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The verdicts behind HostCapabilities' v1 `ipvs` and `nftables` members, from the backends that
   * own those modes (the host app passes the built-in ones). Core gathers evidence; it judges no mode.
   */
  readonly verdicts?: { readonly ipvs?: ModeVerdict; readonly nftables?: ModeVerdict };
}

/** What HostCapabilities says of a mode nobody judged. */
function notJudged(mode: string): ModeCapability {
  return { available: false, reason: `${mode}: not judged (no verdict given to host detection)` };
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

  const evidence: HostEvidence = { kernel, tools: { iptables, ip6tables, ipset, ipvsadm, nft, conntrack } };
  const env = options.env ?? process.env;
  const ipvs = options.verdicts?.ipvs ? await options.verdicts.ipvs(evidence, exec, env) : notJudged('IPVS');
  const nftables = options.verdicts?.nftables ? await options.verdicts.nftables(evidence, exec, env) : notJudged('nftables');

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
    evidence,
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
