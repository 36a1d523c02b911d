export {
  AFFINITY_PREFIX,
  CLUSTER_POLICY_PREFIX,
  ENDPOINT_PREFIX,
  endpointNameBase,
  EXTERNAL_PREFIX,
  FIREWALL_PREFIX,
  hashAndTruncate,
  isAffinitySetName,
  isServiceChainName,
  LOCAL_POLICY_PREFIX,
  NAME_LENGTH_MAX,
  servicePortNameBase,
} from './object-names.js';
export { NameCache } from './name-cache.js';
