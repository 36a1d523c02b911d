import type { DependencyContainer } from 'tsyringe';
import {
  PROXY_METRICS,
  describeFieldErrors,
  resolveOptional,
  validateEndpointSlice,
  validateNode,
  validateService,
  type FieldError,
  type InvalidObjectKind,
  type Logger,
  type ProxyMetrics,
  type V1EndpointSlice,
  type V1Node,
  type V1Service,
} from '@kube-proxy/core';
import type { ManifestHandlers } from './manifests/manifest-source.js';
import { ValidatedStream } from './validated-stream.js';

/** At most this many field errors are spelled out in a skip's log line (the count says how many more). */
const MAX_LOGGED_ERRORS = 8;
/** Object names in log lines are clipped to this many characters (a name can be megabytes of garbage). */
const MAX_LOGGED_NAME = 300;

/**
 * Validation at the edge, for every source (manifests and API server alike): Services, EndpointSlices
 * and the Node are checked as kube-apiserver checks them (core's validateService,
 * validateEndpointSlice, validateNode) before they reach the Provider, so that no object the API server
 * would refuse reaches the model or a renderer. An invalid object is skipped with one warning naming
 * it and its fields, and counted in kubeproxy_invalid_objects_total{kind}; the others flow on with
 * informer semantics (see ValidatedStream). The metrics come from the container under core's
 * PROXY_METRICS token, as the backends get them; skips seen before the metrics are known (the CLI reads
 * its Node before the proxier exists) are counted once they are.
 */
export class ObjectValidation {
  private readonly services: ValidatedStream<V1Service>;
  private readonly slices: ValidatedStream<V1EndpointSlice>;
  private readonly nodes: ValidatedStream<V1Node>;
  private metrics: ProxyMetrics | undefined;
  private metricsResolved = false;
  private readonly uncounted: InvalidObjectKind[] = [];

  constructor(private readonly logger: Logger) {
    const report = (kind: InvalidObjectKind, ref: string, errors: readonly FieldError[], keptPrevious: boolean) =>
      this.skipped(kind, ref, errors, keptPrevious);
    this.services = new ValidatedStream('Service', validateService, report);
    this.slices = new ValidatedStream('EndpointSlice', validateEndpointSlice, report);
    this.nodes = new ValidatedStream('Node', validateNode, report);
  }

  /** Counts skips in the ProxyMetrics registered in `container`, if any (including earlier skips). */
  useMetricsFrom(container: DependencyContainer): void {
    this.metrics = resolveOptional<ProxyMetrics>(container, PROXY_METRICS);
    this.metricsResolved = true;
    for (const kind of this.uncounted.splice(0)) this.metrics?.invalidObject(kind);
  }

  /** Counts an object a source refused before validation could see it (it logged it itself). */
  countInvalid(kind: InvalidObjectKind): void {
    if (this.metricsResolved) this.metrics?.invalidObject(kind);
    else this.uncounted.push(kind);
  }

  /** The Node for a one-off read (node IPs at startup): itself when valid, else undefined (warned). */
  admitNode(node: V1Node | undefined): V1Node | undefined {
    if (node === undefined) return undefined;
    return this.nodes.admit(node) ? node : undefined;
  }

  /** `handlers` behind validation: what a source's start() should be given. */
  wrap(handlers: ManifestHandlers): ManifestHandlers {
    const s = this.services.handler({
      add: (o) => handlers.services.onServiceAdd(o),
      update: (p, c) => handlers.services.onServiceUpdate(p, c),
      delete: (o) => handlers.services.onServiceDelete(o),
      synced: () => handlers.services.onServicesSynced(),
    });
    const e = this.slices.handler({
      add: (o) => handlers.endpointSlices.onEndpointSliceAdd(o),
      update: (p, c) => handlers.endpointSlices.onEndpointSliceUpdate(p, c),
      delete: (o) => handlers.endpointSlices.onEndpointSliceDelete(o),
      synced: () => handlers.endpointSlices.onEndpointSlicesSynced(),
    });
    const n = this.nodes.handler({
      add: (o) => handlers.node.onNodeAdd(o),
      update: (p, c) => handlers.node.onNodeUpdate(p, c),
      delete: (o) => handlers.node.onNodeDelete(o),
      synced: () => handlers.node.onNodeSynced(),
    });
    return {
      services: { onServiceAdd: s.add, onServiceUpdate: s.update, onServiceDelete: s.delete, onServicesSynced: s.synced },
      endpointSlices: {
        onEndpointSliceAdd: e.add,
        onEndpointSliceUpdate: e.update,
        onEndpointSliceDelete: e.delete,
        onEndpointSlicesSynced: e.synced,
      },
      node: { onNodeAdd: n.add, onNodeUpdate: n.update, onNodeDelete: n.delete, onNodeSynced: n.synced },
      // ServiceCIDRs arrive as one list; the sources check each object as they fold it in (ServiceCIDRSet).
      ...(handlers.serviceCIDRs ? { serviceCIDRs: handlers.serviceCIDRs } : {}),
    };
  }

  private skipped(kind: InvalidObjectKind, ref: string, errors: readonly FieldError[], keptPrevious: boolean): void {
    const shown = errors.slice(0, MAX_LOGGED_ERRORS);
    const more = errors.length - shown.length;
    this.logger.warn(
      keptPrevious
        ? 'Skipping invalid object (the API server would refuse it); keeping its last valid version'
        : 'Skipping invalid object (the API server would refuse it)',
      {
        kind,
        object: ref.length > MAX_LOGGED_NAME ? `${ref.slice(0, MAX_LOGGED_NAME)}…(${ref.length - MAX_LOGGED_NAME} more characters)` : ref,
        field: [...new Set(shown.map((e) => e.field))].join(', ') + (more > 0 ? ', …' : ''),
        error: describeFieldErrors(shown) + (more > 0 ? `; …and ${more} more` : ''),
      },
    );
    this.countInvalid(kind);
  }
}
