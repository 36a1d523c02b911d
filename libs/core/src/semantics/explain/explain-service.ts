import type { ExplainInput } from './explain-input.js';
import type { ServiceExplanation } from './service-explanation.js';

/**
 * What `input.service` means on `input.node`: for each port and IP family, the addresses it answers
 * on, the endpoints each traffic class reaches and those it leaves out (with the reason), masquerading,
 * the source-range firewall, the health-check node port and the no-endpoint verdict. Pure: built
 * through the same code the proxiers use (servicePortsFromService, EndpointSliceCache, planServicePort,
 * planNodePortAddresses), so it says what they program.
 */
export function explainService(input: ExplainInput): ServiceExplanation {
  throw new Error(`explainService: not implemented yet (${input.node.name})`);
}
