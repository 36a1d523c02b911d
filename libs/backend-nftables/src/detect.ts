import { notInstalled, parseVersion, safeRun, versionAtLeast, type CommandExecutor, type HostEvidence, type ModeCapability } from '@kube-proxy/core';

/*
 * Whether this host can run nftables mode, judged here from the evidence core gathers plus one
 * `nft --check` of a probe table (what knftables checks at startup): the mode's own verdict.
 */

/** Upstream's NFTablesKubeProxyKernelVersion. */
export const MIN_NFTABLES_KERNEL = '5.13';
/** knftables refuses older nft, which parses the whole ruleset and can crash on newer rules. */
export const MIN_NFT_VERSION = '1.0.1';
/** Set to anything to skip the kernel check, as upstream allows. */
export const SKIP_KERNEL_CHECK_ENV = 'KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK';

/** The transaction upstream's knftables checks at startup; `--check` never commits it. */
const PROBE = 'add table ip kube-proxy { comment "rules for kube-proxy" ; }\n';

/**
 * nftables mode needs nft >= 1.0.1, kernel >= 5.13 and an nft that can talk to the kernel. The kernel
 * version stands in for the host's nft version: upstream assumes a distro's nft is as new as its
 * kernel, and kernel 5.13 implies nft 1.0.1+, so our rules cannot break the host's own nft
 * (issues.k8s.io/122743). The final `nft --check` also fails without CAP_NET_ADMIN, which is right:
 * the proxy could not program nftables either.
 */
export async function nftablesVerdict(
  evidence: HostEvidence,
  exec: CommandExecutor,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ModeCapability> {
  const { kernel: k } = evidence;
  const { nft } = evidence.tools;
  const no = (why: string) => ({ available: false, reason: `nftables unavailable: ${why}` });
  if (!nft.present) return no('nft is not installed');
  if (!versionAtLeast(parseVersion(nft.version ?? ''), MIN_NFT_VERSION)) {
    return no(`nft ${nft.version ?? '(unknown version)'} is older than ${MIN_NFT_VERSION}`);
  }
  if (k.kconfig?.get('NF_TABLES') === 'n') return no(`the kernel is built without nf_tables (${k.kconfigSource}: # CONFIG_NF_TABLES is not set)`);
  const skip = (env[SKIP_KERNEL_CHECK_ENV] ?? '') !== '';
  if (!skip && !versionAtLeast(parseVersion(k.release), MIN_NFTABLES_KERNEL)) {
    return no(
      `kernel ${k.release} is older than ${MIN_NFTABLES_KERNEL}; kube-proxy's nftables mode requires ${MIN_NFTABLES_KERNEL}+ so the host's nft ` +
        `(assumed as new as the kernel) can read our rules (set ${SKIP_KERNEL_CHECK_ENV} to override)`,
    );
  }
  const check = await safeRun(exec, 'nft', ['--check', '-f', '-'], { input: PROBE });
  if (notInstalled(check) || check.exitCode !== 0) {
    const detail = (check.spawnError ?? check.stderr).trim().split('\n')[0] ?? '';
    return no(`"nft --check" of a probe table failed${detail ? `: ${detail}` : ''}`);
  }
  const kernelNote = skip ? `kernel check skipped by ${SKIP_KERNEL_CHECK_ENV}` : `kernel ${k.release} >= ${MIN_NFTABLES_KERNEL}`;
  return { available: true, reason: `nftables available: nft ${nft.version} >= ${MIN_NFT_VERSION}, ${kernelNote}, nft --check passed` };
}
