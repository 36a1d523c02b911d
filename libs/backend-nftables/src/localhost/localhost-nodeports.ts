/**
 * nftables mode's localhost NodePorts (KEP-6032, gate KubeProxyNFTablesLocalhostNodePorts, alpha)
 * for one proxier: the proxier hands each service port's plan and render here while it renders,
 * and calls apply() once its transaction went through. With the gate off there is no instance
 * and the table is exactly as before.
 *
 * - Listeners run when nodePortAddresses explicitly names a loopback address of the family
 *   (core's containsExplicitLoopback: `localhost`, 127.0.0.0/8, ::1, … – not a /0 that covers it),
 *   as upstream v1.37; never in --dry-run (nothing is bound, the rules are printed).
 * - The reject map and chains are in the table whenever the gate is on (see localhost-reject-render).
 */
import type { IPFamily, ServicePortPlan } from '@kube-proxy/core';
import type { NftFamily } from '../nft/nft-objects.js';
import type { ServicePortRender } from '../render/service-port-render.js';
import type { TableSkeleton } from '../render/table-skeleton.js';
import type { LocalhostNodePortListeners } from './localhost-listeners.js';
import { localhostNodePortOf, type LocalhostNodePort } from './localhost-nodeport.js';
import { withLocalhostReject, withLocalhostRejectElement } from './localhost-reject-render.js';

export interface LocalhostNodePortsOptions {
  readonly family: IPFamily;
  /** The gate is on and nodePortAddresses names loopback: TCP NodePorts are served on it. */
  readonly proxyActive: boolean;
  /** The listeners (absent in --dry-run, or when the proxy is not active). */
  readonly listeners?: LocalhostNodePortListeners;
}

export class LocalhostNodePorts {
  readonly family: IPFamily;
  readonly proxyActive: boolean;
  /** service-port key → what it wants, kept across partial syncs. */
  private readonly wanted = new Map<string, LocalhostNodePort>();

  constructor(private readonly options: LocalhostNodePortsOptions) {
    this.family = options.family;
    this.proxyActive = options.proxyActive;
  }

  get listeners(): LocalhostNodePortListeners | undefined {
    return this.options.listeners;
  }

  /** The table skeleton with the reject chains and map. */
  skeleton(skeleton: TableSkeleton, family: NftFamily): TableSkeleton {
    return withLocalhostReject(skeleton, family);
  }

  /**
   * One rendered service port: records the listener it wants (from the same plan its rules came
   * from) and returns the render with its reject element, if any.
   */
  render(key: string, plan: ServicePortPlan, render: ServicePortRender): ServicePortRender {
    const wanted = this.proxyActive ? localhostNodePortOf(plan) : null;
    if (wanted) this.wanted.set(key, wanted);
    else this.wanted.delete(key);
    return withLocalhostRejectElement(render, plan.service, this.proxyActive);
  }

  /** A service port that is gone (or not rendered this time). */
  forget(key: string): void {
    this.wanted.delete(key);
  }

  /** After a sync went through: the listeners follow what the service ports want. */
  async apply(): Promise<void> {
    await this.options.listeners?.sync(this.wanted.values());
  }

  close(): void {
    this.options.listeners?.close();
  }
}
