// A fake Kubernetes API server for informer tests: list/watch of Services, EndpointSlices, Nodes and
// ServiceCIDRs, Event POSTs, selectors, resourceVersion/410 semantics and fault injection, plus
// discovery, OpenAPI and patch support for the real kubectl (and a client that runs it). Test-only;
// nothing that ships may depend on it.
export { TestApiServer, type TestApiServerOptions, type RecordedRequest, type ObjectRef } from './test-api-server.js';
export type { KubeObject, KubeMetadata } from './object-store.js';
export { parseLabelSelector, parseFieldSelector, matchesLabels, matchesFields, SelectorError } from './selectors.js';
export { waitUntil } from './wait.js';
export { Kubectl, KUBECTL_BIN, type KubectlOptions, type KubectlResult } from './kubectl.js';
export { strategicMergePatch } from './strategic-merge-patch.js';
export { jsonMergePatch } from './json-merge-patch.js';
export { jsonPatch } from './json-patch.js';
export { PatchError, type Json } from './json.js';
export { BUILT_TEST_APISERVER, testApiServerHostScript } from './host-script.js';
