import type { UDPFlow } from './conntrack-listing.js';
import { flowKey, type UDPFrontends } from './udp-frontends.js';

/**
 * A group of stale flows, deleted by one conntrack filter: flows to one frontend (an address and port,
 * or any address on a NodePort) answered by one source (`replySrc:replySrcPort`: the endpoint they were
 * DNATed to, or the frontend itself for a "black hole" flow nothing translated).
 */
export interface StaleUDPFlows {
  /** The frontend address; absent for a NodePort group (upstream matches NodePorts on the port alone). */
  readonly origDst?: string;
  readonly origDstPort: number;
  readonly replySrc: string;
  readonly replySrcPort: number;
}

/**
 * Decides, flow by flow, whether a UDP flow is stale against the desired state: upstream's
 * reconciler (pkg/proxy/conntrack CleanStaleEntries), keyed by the endpoint's address and port.
 *
 * - A flow to a UDP frontend (ClusterIP / external IP / LoadBalancer VIP, with its port) is stale
 *   unless its reply source is a serving endpoint of that frontend. Services without a serving
 *   endpoint have an empty set, so their flows all go (upstream PR #139629).
 * - A flow to a ClusterIP on a port that no UDP service port serves is stale (the port was removed).
 * - Otherwise, a flow whose original destination port is a UDP NodePort is stale unless its reply
 *   source is a serving endpoint of that NodePort's service.
 * - Any other flow is not ours and is kept.
 *
 * Flows that still reach a serving endpoint are never touched: after a restart with unchanged
 * endpoints nothing is deleted (upstream issue #122740). Groups are de-duplicated, so a thousand
 * clients of one removed endpoint cost one filter.
 */
export class StaleUDPFlowFinder {
  private readonly seen = new Set<string>();
  readonly stale: StaleUDPFlows[] = [];

  constructor(private readonly frontends: UDPFrontends) {}

  /** Looks at one flow (allocation: one key string per flow, more only for stale ones). */
  visit(flow: UDPFlow): void {
    const reply = flowKey(flow.replySrc, flow.replySrcPort);
    const serving = this.frontends.byAddress.get(flowKey(flow.origDst, flow.origDstPort));
    if (serving !== undefined) {
      if (!serving.has(reply)) this.add(flow, true);
      return;
    }
    if (this.frontends.clusterIPs.has(flow.origDst)) {
      this.add(flow, true);
      return;
    }
    const nodePortServing = this.frontends.byNodePort.get(flow.origDstPort);
    if (nodePortServing !== undefined && !nodePortServing.has(reply)) this.add(flow, false);
  }

  private add(flow: UDPFlow, byAddress: boolean): void {
    const id = `${byAddress ? flow.origDst : '*'}|${flow.origDstPort}|${flow.replySrc}|${flow.replySrcPort}`;
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.stale.push(
      byAddress
        ? { origDst: flow.origDst, origDstPort: flow.origDstPort, replySrc: flow.replySrc, replySrcPort: flow.replySrcPort }
        : { origDstPort: flow.origDstPort, replySrc: flow.replySrc, replySrcPort: flow.replySrcPort },
    );
  }
}
