// The API-server source: informers for Services, EndpointSlices and this Node, the client
// configuration (--kubeconfig/--master/in-cluster) and the startup event.
export { ApiSource, NodeWaitError, type ApiSourceOptions } from './api-source.js';
export { createKubeClient, loadKubeConfig, KubeClientConfigError, SERVICE_ACCOUNT_DIR, type KubeClient, type KubeClientOptions, type KubeConfigSource } from './kube-client.js';
export { ApiError } from './kube-api.js';
export { ApiNodeEventRecorder, postBirthCry, startingEvent } from './birth-cry.js';
export { DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
export type { InformerHealth, InformerState } from './resource-informer.js';
export { watchTuningFromEnv, type WatchTuning } from './watch-tuning.js';
