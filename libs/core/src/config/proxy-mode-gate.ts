import { isFeatureEnabled } from './feature-gates.js';

/**
 * The proxy modes built into kube-proxy-ts besides ipvs. With the KubeProxyIPVS gate off these are
 * what the mode check lists (plugin modes are still accepted: only `ipvs` is refused).
 */
const MODES_WITHOUT_IPVS = ['iptables', 'nftables', 'userspace'] as const;

/**
 * Upstream's validateProxyModeLinux with the KubeProxyIPVS gate (v1.37, KEP-5495, PR #139397): when the
 * gate is off, `ipvs` is no longer a valid mode and the configuration is refused, the message listing
 * the valid modes in upstream's words. Blank stays valid; auto-selection then never picks ipvs.
 */
export function proxyModeGateError(mode: string, featureGates: Readonly<Record<string, boolean>>): string | undefined {
  if (mode !== 'ipvs' || isFeatureEnabled(featureGates, 'KubeProxyIPVS')) return undefined;
  return `Invalid value: "ipvs": must be ${MODES_WITHOUT_IPVS.join(',')} or blank (blank means the best-available proxy [currently iptables])`;
}

/** Whether the ipvs mode may run at all (explicitly or by auto-selection). */
export function ipvsModeAllowed(featureGates: Readonly<Record<string, boolean>>): boolean {
  return isFeatureEnabled(featureGates, 'KubeProxyIPVS');
}
