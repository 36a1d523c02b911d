/**
 * Service plans: the backend-neutral meaning of each service port (addresses by traffic class,
 * endpoints per class, masquerading, source-range firewall, no-endpoint verdicts, health-check
 * port) and of the node-port address selection, decided once in core for every kernel backend.
 */
export type {
  EndpointSetKind,
  ExternalMasquerade,
  InternalMasquerade,
  NoEndpointsVerdict,
  ServicePortPlan,
} from './service-port-plan.js';
export { endpointSetOf, planServicePort, type ServicePlanContext } from './plan-service-port.js';
export {
  NODE_PORT_ADDRESSES_ALL,
  NODE_PORT_ADDRESSES_LOCALHOST,
  NODE_PORT_ADDRESSES_PRIMARY,
  NODE_PORT_ADDRESS_KEYWORDS,
  isNodePortAddressKeyword,
} from './node-port-address-keywords.js';
export { parseNodePortAddresses, resolveNodePortAddresses, type NetworkInterfaces, type NodePortAddresses } from './node-port-addresses.js';
export { NodePortInterfaces, addressesAsInterfaces, nodeObjectAddresses } from './node-port-interfaces.js';
export { planNodePortAddresses, type NodePortAddressPlan, type NodePortAddressSelection } from './node-port-address-plan.js';
