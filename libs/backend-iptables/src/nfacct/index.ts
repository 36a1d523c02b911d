export { NFACCT_BINARY, NfacctClient, parseNfacctList, type NfacctCounterValue } from './nfacct-client.js';
export { NFACCT_READ_CACHE_MS, NfacctCounters, type NfacctPackets, type NfacctPresence } from './nfacct-counters.js';
