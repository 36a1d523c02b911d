export * from './object-names.js';
export { NameCache } from './name-cache.js';
