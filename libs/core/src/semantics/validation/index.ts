// Validation at the edge: Services, EndpointSlices and Nodes checked as kube-apiserver checks them,
// before any source hands them to the model, so that nothing the API server would refuse reaches a
// renderer.
export { describeFieldErrors, type FieldError } from './field-error.js';
export { validateService } from './service.js';
export { validateEndpointSlice } from './endpoint-slice.js';
export { validateNode } from './node.js';
export {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isFullyQualifiedDomainName,
  isIANAServiceName,
  isLabelValue,
  isQualifiedName,
} from './name-rules.js';
