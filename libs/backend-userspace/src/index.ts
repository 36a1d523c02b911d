export { userspaceBackend, userspaceBackend as default } from './plugin.js';
