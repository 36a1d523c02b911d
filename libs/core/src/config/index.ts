export {
  type ClientConnectionConfiguration,
  type DetectLocalConfiguration,
  type IPTablesConfiguration,
  type IPVSConfiguration,
  type KubeProxyConfiguration,
  type KubeProxyConntrackConfiguration,
  type LocalMode,
  type LoggingConfiguration,
  type NFTablesConfiguration,
} from './types.js';
export { DurationError, formatDuration, formatDurationNs, normalizeDuration, parseDuration, parseDurationNs } from './duration.js';
export { parsePortRange, type PortRange } from './port-range.js';
export { ConfigError, type ConfigFieldError, formatFieldError, formatFieldErrors } from './errors.js';
export {
  API_VERSION,
  applyDefaults,
  type DeepPartial,
  DEFAULT_HEALTHZ_PORT,
  DEFAULT_METRICS_PORT,
  DEFAULT_OOM_SCORE_ADJ,
  defaultConfiguration,
  KIND,
  type KubeProxyConfigurationInput,
} from './defaults.js';
export {
  describeFeatureGates,
  EMULATED_KUBERNETES_VERSION,
  featureGateErrors,
  type FeatureGateSpec,
  type FeatureStage,
  isFeatureEnabled,
  KUBE_PROXY_FEATURE_GATES,
} from './feature-gates.js';
export { effectiveFeatureGates, featureEnabled, setEffectiveFeatureGates } from './effective-feature-gates.js';
export { ipvsModeAllowed, proxyModeGateError } from './proxy-mode-gate.js';
export { type FieldSchema, KUBE_PROXY_CONFIGURATION_SCHEMA } from './schema.js';
export { decodeConfiguration } from './decode.js';
export { IPVS_SCHEDULERS, validateConfiguration } from './validate.js';
export {
  applyFlags,
  type CliOptions,
  findFlag,
  findShorthand,
  FlagError,
  type FlagGroup,
  type FlagSpec,
  type FlagType,
  type FlagValue,
  formatHelp,
  KUBE_PROXY_FLAGS,
  type ParsedFlags,
  parseFlags,
} from './flags.js';
export { encodeConfiguration } from './write-config.js';
