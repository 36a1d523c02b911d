export * from './bounded-frequency-runner.js';
export * from './token-bucket.js';
export * from './fake-clock.js';
export { deferred, type Deferred } from './deferred.js';
export { advanceSettling, settle } from './settle.js';
