/**
 * `kube-proxy explain`: what one Service means on one node, decided by the same core code every
 * proxier uses, and how that compares with what a mode's kernel objects hold.
 */
export type { ExplainConfig, ExplainInput, ExplainNode } from './explain-input.js';
export type {
  AddressKind,
  AnsweringAddress,
  EndpointFacts,
  ExcludedEndpoint,
  ExclusionReason,
  MasqueradeExplanation,
  MasqueradeWhen,
  NoEndpointVerdict,
  NodePortExplanation,
  PortExplanation,
  ServiceExplanation,
  SourceRangeExplanation,
  TrafficClass,
  TrafficClassExplanation,
} from './service-explanation.js';
export { explainService } from './explain-service.js';
export { compareWithKernel, type CompareOptions } from './compare-with-kernel.js';
export { formatExplanation } from './format-explanation.js';
