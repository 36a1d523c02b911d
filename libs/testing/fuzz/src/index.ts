// Property-based fuzzing support (fast-check): generators of valid and hostile Services,
// EndpointSlices and Nodes, the validation → Provider → renderer pipeline they run through, and
// structural checks of the payloads. Shared by the unit properties and the real-kernel e2e suite.
export { DEFAULT_FUZZ_SEED, fuzzRuns, fuzzSeed, replayHint } from './fuzz-seed.js';
export { HOSTILE_FRAGMENTS, garbageValue, hostileString, nonArrayValue, nonObjectValue } from './hostile-strings.js';
export { isDns1035Label, isDns1123Label, isDns1123Subdomain, isLabelValue, isPortName } from './names.js';
export { BAD_POOL_ADDRESS, clusterIPFor, externalIP, invalidCIDR, invalidIP, networkCIDR, podCIDR, podIP, type AddressPool } from './addresses.js';
export type { FuzzObject, Mutation } from './fuzz-object.js';
export { SERVICE_MUTATIONS, garbageService, invalidService, validService, type ServiceKind, type ServiceOptions } from './service-arbitrary.js';
export {
  ENDPOINT_SLICE_MUTATIONS,
  FUZZ_NODE_NAME,
  FUZZ_OTHER_NODE,
  FUZZ_ZONES,
  invalidEndpointSlice,
  validEndpointSlice,
  type SliceAddressType,
  type SliceOptions,
} from './endpoint-slice-arbitrary.js';
export { LABEL_ZONE, NODE_MUTATIONS, invalidNode, validNode } from './node-arbitrary.js';
export { fuzzCluster, fuzzClusterChange, type ClusterOptions, type FuzzCluster, type FuzzClusterChange } from './cluster-arbitrary.js';
export {
  CORE_VALIDATOR,
  FUZZ_CLUSTER_CIDRS,
  FUZZ_NODE_IPS,
  runChange,
  runPipeline,
  type ChangeRun,
  type FamilyRun,
  type FieldError,
  type ObjectValidator,
  type ObjectVerdict,
  type PipelineOptions,
  type PipelineRun,
  type ProviderHandlers,
} from './provider-pipeline.js';
export { MAX_COMMENT_LENGTH, payloadProblems, tokenizeRuleLine, type PayloadCheckOptions, type RuleToken } from './payload-checks.js';
export { expectedServicePorts, missingFromPayload, type ExpectedServicePort } from './presence-oracle.js';
export { samplePayloads, type SampleOptions, type SampledPayload } from './payload-sample.js';
export { runProblems, showValue, validatedRunProblems } from './run-checks.js';
