export type * from './handlers.js';
export * from './provider.js';
export * from './proxy-context.js';
export * from './dry-run-block.js';
export * from './backend-plugin.js';
export * from './fake-container.js';
export * from './testing-context.js';
