/**
 * The feature gates kube-proxy-ts knows, with their state in the Kubernetes release whose behaviour we
 * emulate (v1.37; upstream's pkg/features/kube_features.go, the gates kube-proxy reads).
 * Upstream rejects unknown gate names and refuses to turn off a GA gate that is locked to its default;
 * validation does the same with this table.
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureGateSpec {
  readonly stage: FeatureStage;
  readonly default: boolean;
  /** GA gates cannot be set to anything but their default. */
  readonly lockedToDefault: boolean;
  readonly description: string;
}

/** The Kubernetes minor release kube-proxy-ts emulates (feature gates, show-hidden-metrics). */
export const EMULATED_KUBERNETES_VERSION = { major: 1, minor: 37 } as const;

export const KUBE_PROXY_FEATURE_GATES: Readonly<Record<string, FeatureGateSpec>> = {
  // Meta-gates every component accepts: switch all alpha/beta gates at once.
  AllAlpha: { stage: 'ALPHA', default: false, lockedToDefault: false, description: 'all alpha features' },
  AllBeta: { stage: 'BETA', default: false, lockedToDefault: false, description: 'all beta features' },
  // Gates the proxy itself reads, as v1.37 lists them. GA gates that upstream has since removed are
  // unknown names again, refused as upstream refuses them: KubeProxyDrainingTerminatingNodes (GA v1.31,
  // removed after v1.32), LoadBalancerIPMode (GA v1.32, removed after v1.34), ServiceTrafficDistribution
  // (GA v1.33, removed after v1.35). PreferSameTrafficDistribution is GA and locked since v1.35.
  NFTablesProxyMode: { stage: 'GA', default: true, lockedToDefault: true, description: 'the nftables proxy mode' },
  TopologyAwareHints: { stage: 'GA', default: true, lockedToDefault: true, description: 'EndpointSlice zone hints' },
  PreferSameTrafficDistribution: { stage: 'GA', default: true, lockedToDefault: true, description: 'PreferSameZone / PreferSameNode traffic distribution' },
  MultiCIDRServiceAllocator: { stage: 'GA', default: true, lockedToDefault: true, description: 'watch ServiceCIDR objects' },
  // v1.37 gates. KubeProxyIPVS (KEP-5495, PR #139397) is deprecated and on: off refuses --proxy-mode=ipvs
  // (upstream plans default off in v1.40 and locked off in v1.43). AllowServiceExternalIPs (KEP-5707) is
  // deprecated since v1.36 and on: off drops spec.externalIPs in core's service info. NFTablesNetlink
  // (PR #137536) is beta and on upstream; here it is accepted and changes nothing (see the README).
  KubeProxyNFTablesLocalhostNodePorts: { stage: 'ALPHA', default: false, lockedToDefault: false, description: 'localhost NodePorts in nftables mode, served by a userspace proxy (KEP-6032)' },
  KubeProxyIPVS: { stage: 'DEPRECATED', default: true, lockedToDefault: false, description: 'the deprecated ipvs proxy mode' },
  AllowServiceExternalIPs: { stage: 'DEPRECATED', default: true, lockedToDefault: false, description: 'program the deprecated spec.externalIPs of Services' },
  NFTablesNetlink: { stage: 'BETA', default: true, lockedToDefault: false, description: 'list nftables objects over netlink instead of parsing nft output' },
  // component-base z-pages (KEP-4827 / KEP-4828): /statusz and /flagz on the metrics address.
  ComponentStatusz: { stage: 'BETA', default: true, lockedToDefault: false, description: 'serve /statusz' },
  ComponentFlagz: { stage: 'BETA', default: true, lockedToDefault: false, description: 'serve /flagz' },
  // component-base logging gates (they gate logging.options).
  LoggingAlphaOptions: { stage: 'ALPHA', default: false, lockedToDefault: false, description: 'alpha logging options' },
  LoggingBetaOptions: { stage: 'BETA', default: true, lockedToDefault: false, description: 'beta logging options' },
  ContextualLogging: { stage: 'BETA', default: true, lockedToDefault: false, description: 'contextual logging' },
};

/** The problems upstream's FeatureGate.SetFromMap would report for these settings. */
export function featureGateErrors(settings: Readonly<Record<string, boolean>>): string[] {
  const errors: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    const spec = KUBE_PROXY_FEATURE_GATES[name];
    if (!spec) {
      errors.push(`unrecognized feature gate: ${name}`);
    } else if (spec.lockedToDefault && value !== spec.default) {
      errors.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
    }
  }
  return errors;
}

/** Whether `name` is on, given the configured overrides (AllAlpha/AllBeta apply to non-GA gates). */
export function isFeatureEnabled(settings: Readonly<Record<string, boolean>>, name: string): boolean {
  const spec = KUBE_PROXY_FEATURE_GATES[name];
  if (!spec) throw new Error(`unknown feature gate ${name}`);
  const explicit = settings[name];
  if (explicit !== undefined) return explicit;
  if (spec.stage === 'ALPHA' && settings['AllAlpha'] !== undefined) return settings['AllAlpha'];
  if (spec.stage === 'BETA' && settings['AllBeta'] !== undefined) return settings['AllBeta'];
  return spec.default;
}

/** "Name=true|false (STAGE - default=x)" lines for --help, like upstream's KnownFeatures(). */
export function describeFeatureGates(): string[] {
  return Object.entries(KUBE_PROXY_FEATURE_GATES)
    .filter(([, spec]) => spec.stage !== 'GA')
    .map(([name, spec]) => `${name}=true|false (${spec.stage} - default=${spec.default})`)
    .sort();
}
