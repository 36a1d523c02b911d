export { ipvsBackend, ipvsBackend as default } from './plugin.js';
export * from './cleanup.js';
