export { iptablesTracer } from './iptables-tracer.js';
export type { IptablesSnapshot } from './iptables-snapshot.js';
