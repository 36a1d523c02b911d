// A fake Kubernetes API server for informer tests: list/watch of Services, EndpointSlices and Nodes,
// Event POSTs, selectors, resourceVersion/410 semantics and fault injection. Test-only; nothing that
// ships may depend on it.
export { TestApiServer, type TestApiServerOptions, type RecordedRequest, type ObjectRef } from './test-api-server.js';
export type { KubeObject, KubeMetadata } from './object-store.js';
export { parseLabelSelector, parseFieldSelector, matchesLabels, matchesFields, SelectorError } from './selectors.js';
export { waitUntil } from './wait.js';
