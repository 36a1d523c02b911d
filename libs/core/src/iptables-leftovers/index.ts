export * from './iptables-leftovers.js';
