import { IPVS_SCHEDULERS, parseVersion, versionAtLeast, type HostEvidence, type KernelEvidence, type ModeCapability } from '@kube-proxy/core';

/*
 * Whether this host can run IPVS mode, judged here from the evidence core gathers (kernel files,
 * tool versions): the mode's own verdict, as upstream's CanUseIPVSProxier lives in pkg/proxy/ipvs.
 */

/** Upstream's MinIPSetCheckVersion: older ipset lacks the set types IPVS mode uses. */
export const MIN_IPSET_VERSION = '6.0';

/** Modules upstream's IPVS mode used to require (besides ip_vs): default schedulers and conntrack. */
const COMPANION_MODULES = ['ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'nf_conntrack'];

interface KernelVerdict {
  readonly ok: boolean;
  readonly why: string;
}

/** Module name → kernel config symbol (ip_vs_rr → IP_VS_RR). */
function kconfigName(module: string): string {
  return module.toUpperCase();
}

function kernelHasIpvs(k: KernelEvidence): KernelVerdict {
  const conf = k.kconfig?.get('IP_VS');
  if (conf === 'n') return { ok: false, why: `the running kernel is built without IPVS (${k.kconfigSource}: # CONFIG_IP_VS is not set)` };
  if (k.procNetIpVs) return { ok: true, why: 'ip_vs is loaded (/proc/net/ip_vs exists)' };
  if (k.loadedModules?.has('ip_vs')) return { ok: true, why: 'ip_vs is loaded (/proc/modules)' };
  if (k.builtinModules?.has('ip_vs')) return { ok: true, why: `ip_vs is built in (/lib/modules/${k.release}/modules.builtin)` };
  if (k.installedModules?.has('ip_vs')) {
    return { ok: true, why: `ip_vs is installed as a module (/lib/modules/${k.release}/modules.dep) and loads on first use` };
  }
  if (conf === 'y') return { ok: true, why: `ip_vs is built in (${k.kconfigSource}: CONFIG_IP_VS=y)` };
  if (conf === 'm') {
    if (k.installedModules) {
      return { ok: false, why: `CONFIG_IP_VS=m but the ip_vs module is not installed in /lib/modules/${k.release}` };
    }
    // /lib/modules is not visible here (typical in a container), but the kernel loads modules on
    // demand with the host's modprobe, so a module kernel is good evidence.
    return { ok: true, why: `ip_vs is built as a module (${k.kconfigSource}: CONFIG_IP_VS=m); the kernel loads it on demand` };
  }
  return { ok: false, why: 'no evidence of IPVS in the kernel' };
}

/** Where each file-based source stood, for the reason text. */
function evidenceNotes(k: KernelEvidence): string[] {
  const notes = [`/proc/net/ip_vs ${k.procNetIpVs ? 'present' : 'absent'}`];
  if (!k.loadedModules) {
    notes.push(
      k.kconfig?.get('MODULES') === 'n'
        ? '/proc/modules absent (kernel built without module support: # CONFIG_MODULES is not set)'
        : '/proc/modules absent (kernel without module support, or /proc not the host\'s)',
    );
  }
  if (!k.builtinModules && !k.installedModules) notes.push(`/lib/modules/${k.release} absent`);
  notes.push(k.kconfigSource ? `kernel config read from ${k.kconfigSource}` : 'no kernel config (/proc/config.gz, /boot/config-*)');
  return notes;
}

function missingCompanions(k: KernelEvidence): string[] {
  return COMPANION_MODULES.filter((m) => {
    if (k.kconfig?.get(kconfigName(m)) === 'n') return true;
    const lists = [k.loadedModules, k.builtinModules, k.installedModules].filter((s) => s !== undefined);
    if (lists.length === 0 || k.kconfig?.has(kconfigName(m))) return false;
    return !lists.some((s) => s.has(m));
  });
}

/**
 * The schedulers the evidence shows (module loaded, built in or installed, or CONFIG_IP_VS_<NAME>=y|m),
 * or undefined when no module list and no kernel config can tell.
 */
export function knownSchedulers(k: KernelEvidence): string[] | undefined {
  const lists = [k.loadedModules, k.builtinModules, k.installedModules].filter((s) => s !== undefined);
  if (lists.length === 0 && !k.kconfig) return undefined;
  return IPVS_SCHEDULERS.filter((s) => {
    const conf = k.kconfig?.get(kconfigName(`ip_vs_${s}`));
    if (conf === 'y' || conf === 'm') return true;
    return lists.some((l) => l.has(`ip_vs_${s}`));
  });
}

/**
 * nf_conntrack is known to be missing: the kernel config says so, or both module lists of the
 * release (built in and installed) were read and neither, nor /proc/modules, has it.
 */
function conntrackMissing(k: KernelEvidence): boolean {
  const conf = k.kconfig?.get('NF_CONNTRACK');
  if (conf === 'n') return true;
  if (conf === 'y' || conf === 'm') return false;
  if (k.builtinModules === undefined || k.installedModules === undefined) return false;
  return ![k.loadedModules, k.builtinModules, k.installedModules].some((s) => s?.has('nf_conntrack'));
}

/**
 * IPVS mode needs the kernel's IPVS (seen in /proc/net/ip_vs, the module lists or the kernel config),
 * ipset >= 6.0 (for the sets the mode matches on), and ipvsadm (kube-proxy-ts programs IPVS through it;
 * upstream talks netlink directly). Nothing on the host is changed to find out.
 */
export function ipvsVerdict(evidence: HostEvidence): ModeCapability {
  const { kernel: k } = evidence;
  const { ipset, ipvsadm } = evidence.tools;
  const kernel = kernelHasIpvs(k);
  const problems: string[] = [];
  if (!kernel.ok) problems.push(kernel.why);
  if (kernel.ok && conntrackMissing(k)) problems.push('the kernel has no nf_conntrack (IPVS mode masquerades through conntrack)');
  if (!ipvsadm.present) problems.push('ipvsadm is not installed');
  if (!ipset.present) problems.push('ipset is not installed');
  else if (!versionAtLeast(parseVersion(ipset.version ?? ''), MIN_IPSET_VERSION)) {
    problems.push(`ipset ${ipset.version ?? '(unknown version)'} is older than ${MIN_IPSET_VERSION}`);
  }
  const tools = [
    ipset.present ? `ipset ${ipset.version ?? ''} present`.replace('  ', ' ') : undefined,
    ipvsadm.present ? `ipvsadm ${ipvsadm.version ?? ''} present`.replace('  ', ' ') : undefined,
  ].filter((t) => t !== undefined);
  const missing = missingCompanions(k);
  const caveat = missing.length ? ` Missing companion modules: ${missing.join(', ')}.` : '';
  const notes = [...evidenceNotes(k), ...tools].join('; ');

  const schedulers = knownSchedulers(k);
  const withSchedulers = schedulers === undefined ? {} : { schedulers };
  if (problems.length === 0) return { available: true, reason: `IPVS available: ${kernel.why}; ${tools.join('; ')}.${caveat}`, ...withSchedulers };
  return { available: false, reason: `IPVS unavailable: ${problems.join('; ')}. Evidence: ${notes}.${caveat}` };
}
