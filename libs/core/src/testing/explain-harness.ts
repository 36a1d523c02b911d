/*
 * The call every explain spec makes: one Service explained on node-1 (InternalIP 10.0.0.1, iptables
 * mode unless the case says otherwise), and accessors for the parts the specs assert on.
 */
import type { V1EndpointSlice, V1Node, V1Service } from '@kubernetes/client-node';
import type { KubeProxyConfigurationInput } from '../config/defaults.js';
import { explainTestConfig, explainTestNode } from './explain-objects.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import { explainService } from '../semantics/explain/explain-service.js';
import type { PortExplanation, ServiceExplanation, TrafficClassExplanation } from '../semantics/explain/service-explanation.js';

export const EXPLAIN_NODE = 'node-1';

export interface ExplainCase {
  config?: KubeProxyConfigurationInput;
  node?: V1Node;
  addresses?: string[];
  families?: IPFamily[];
  nodeIPs?: Partial<Record<IPFamily, string>>;
}

export function explainOnNode(service: V1Service, slices: V1EndpointSlice[], o: ExplainCase = {}): ServiceExplanation {
  return explainService({
    service,
    endpointSlices: slices,
    node: {
      name: EXPLAIN_NODE,
      object: o.node ?? explainTestNode(EXPLAIN_NODE, { addresses: ['10.0.0.1'] }),
      ...(o.addresses ? { addresses: o.addresses } : {}),
      ...(o.nodeIPs ? { nodeIPs: o.nodeIPs } : {}),
    },
    config: explainTestConfig(o.config ?? { mode: 'iptables' }),
    families: o.families ?? ['IPv4'],
  });
}

/** The explanation's only port (fails the test when there are several). */
export function onlyPort(x: ServiceExplanation): PortExplanation {
  if (x.ports.length !== 1) throw new Error(`expected one port, got ${x.ports.length}`);
  return x.ports[0] as PortExplanation;
}

export const internalClass = (p: PortExplanation): TrafficClassExplanation => p.trafficClasses[0] as TrafficClassExplanation;
export const externalClass = (p: PortExplanation): TrafficClassExplanation => p.trafficClasses[1] as TrafficClassExplanation;
