export type {
  AppliedChanges,
  EndpointsMap,
  ServiceEndpoint,
  ServicePortMap,
  UpdateEndpointsMapResult,
  UpdateServiceMapResult,
} from './types.js';
export type { PortEndpoints, ServiceEndpoints, EndpointsChange } from './endpoints-change.js';
export {
  endpointSliceKeys,
  endpointSliceInfo,
  sliceInfoEquals,
  type SliceInfo,
  type SliceKeys,
  type SlicePort,
  type SliceEndpoint,
} from './endpoint-slice-info.js';
export { EndpointSliceCache, type EndpointSliceCacheOptions } from './endpoint-slice-cache.js';
export { EndpointsChangeTracker, type EndpointsChangeTrackerOptions } from './endpoints-change-tracker.js';
export {
  ServiceChangeTracker,
  type ServiceChange,
  type ServiceChangeTrackerOptions,
  type ServicePortsByName,
} from './service-change-tracker.js';
export { MutableServicePortMap } from './service-port-map.js';
export { MutableEndpointsMap } from './endpoints-map.js';
export { detectStaleConntrackEntries } from './stale-conntrack.js';
export { parseRFC3339 } from './trigger-time.js';
export { ReadonlyMapView } from './readonly-map-view.js';
