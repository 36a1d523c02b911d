/*
 * The iptables skeleton of IPVS mode: the restore payload (set matches, masquerade, node-port /
 * load-balancer / firewall / filter chains) and the chains and jumps it owns.
 */
export { renderIpvsIptables } from './render-ipvs-iptables.js';
export type { IpvsIptablesPayload } from './render-ipvs-iptables.js';
export type { IpvsIptablesOptions } from './ipvs-iptables-options.js';
export { IPVS_IPTABLES_CHAINS, IPVS_IPTABLES_JUMPS, ownedChainsOf } from './owned-chains.js';
export type { IpvsJumpRule, IpvsOwnedChain } from './owned-chains.js';
export { masqueradeMark } from './masquerade-mark.js';
export { lbNoNodeAccessEntries } from './lb-no-node-access.js';
export type { LbNoNodeAccessEntry } from './lb-no-node-access.js';
