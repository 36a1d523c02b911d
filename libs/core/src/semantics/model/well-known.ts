/** Well-known label and annotation keys kube-proxy reads (k8s.io/api core/v1 and discovery/v1). */

/** Node label holding the node's zone; the only node label that steers endpoint selection. */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

/** EndpointSlice label naming the Service a slice belongs to. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

/** EndpointSlice annotation: when the change that produced this slice version happened (RFC 3339). */
export const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

/** Service annotation enabling topology-aware routing (current spelling). */
export const ANNOTATION_TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';

/** Deprecated spelling of the topology annotation; takes precedence when both are set. */
export const ANNOTATION_TOPOLOGY_AWARE_HINTS = 'service.kubernetes.io/topology-aware-hints';

/** spec.sessionAffinityConfig.clientIP.timeoutSeconds when unset (3 hours). */
export const DEFAULT_CLIENT_IP_TIMEOUT_SECONDS = 10800;
