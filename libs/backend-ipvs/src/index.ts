export { ipvsBackend, ipvsBackend as default } from './plugin.js';
