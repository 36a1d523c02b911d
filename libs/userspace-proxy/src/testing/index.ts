/**
 * @kube-proxy/userspace-proxy/testing: real loopback endpoint servers and clients for the specs of
 * the engine and of the backends that run it. Specs and fixtures only, never shipped code.
 */
export * from './loopback.js';
