export { userspaceBackend, userspaceBackend as default } from './plugin.js';
export * from './cleanup.js';
