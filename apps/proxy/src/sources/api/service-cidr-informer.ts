import type { V1ServiceCIDR } from '@kubernetes/client-node';
import type { Logger, ServiceCIDRHandler } from '@kube-proxy/core';
import { ServiceCIDRSet } from '../service-cidrs/service-cidr-set.js';
import { HandlerAdapter } from './handler-adapter.js';
import { serviceCIDRHandler } from './resource-handlers.js';
import { ResourceInformer, type FailurePolicy, type InformerHealth, type ResourceInformerOptions } from './resource-informer.js';

export const SERVICE_CIDRS_PATH = '/apis/networking.k8s.io/v1/servicecidrs';

/**
 * The list+watch of networking.k8s.io/v1 ServiceCIDRs (cluster-scoped, unfiltered, as upstream),
 * folded into one list for the handler. The resource is optional: clusters before 1.33 may not serve
 * it (404: said once, and the informer stops) and the proxy's RBAC may not allow it yet (403: warned
 * once, then retried quietly with backoff). It never holds up the initial sync or the health of the
 * source: the proxy works without it, only without the drop rule for unallocated ClusterIPs.
 */
export class ServiceCIDRInformer {
  private readonly adapter: HandlerAdapter<V1ServiceCIDR>;
  private readonly informer: ResourceInformer<V1ServiceCIDR>;
  private started = false;

  constructor(
    common: Omit<ResourceInformerOptions, 'resource' | 'path' | 'labelSelector' | 'fieldSelector' | 'onFailure'>,
    private readonly logger: Logger,
  ) {
    this.adapter = new HandlerAdapter<V1ServiceCIDR>('ServiceCIDR', logger);
    this.informer = new ResourceInformer<V1ServiceCIDR>(
      { ...common, resource: 'servicecidrs', path: SERVICE_CIDRS_PATH, onFailure: optionalResourcePolicy(logger) },
      this.adapter,
    );
  }

  start(handler: ServiceCIDRHandler): void {
    if (this.started) return;
    this.started = true;
    this.adapter.attach(serviceCIDRHandler(new ServiceCIDRSet(handler, this.logger)));
    this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }

  /** ServiceCIDR objects currently known. */
  get size(): number {
    return this.adapter.size;
  }

  health(): InformerHealth {
    return this.informer.health();
  }
}

function statusOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | null | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

function optionalResourcePolicy(logger: Logger): FailurePolicy {
  let forbiddenWarned = false;
  return (err) => {
    const status = statusOf(err);
    if (status === 404) {
      logger.info('The API server does not serve networking.k8s.io/v1 ServiceCIDRs; going on without them', { resource: 'servicecidrs' });
      return 'give-up';
    }
    if (status === 403) {
      if (!forbiddenWarned) {
        forbiddenWarned = true;
        logger.warn('Not allowed to list/watch ServiceCIDRs; going on without them and retrying quietly', {
          resource: 'servicecidrs',
          err: (err as Error).message,
        });
      }
      return 'retry-quietly';
    }
    return 'retry';
  };
}
