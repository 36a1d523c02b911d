import { isFeatureEnabled } from './feature-gates.js';

/**
 * The feature-gate settings of the running process, as upstream's utilfeature.DefaultFeatureGate: the
 * CLI sets them once from the validated configuration, before any backend starts, and code that must
 * give every backend the same answer (core's service info: AllowServiceExternalIPs) reads them here
 * rather than through each backend's options, so third-party plugins follow without a change.
 * Until set, every gate has its default.
 */
let current: Readonly<Record<string, boolean>> = Object.freeze({});

/** Sets the process-wide gate settings (the configuration's featureGates); returns the previous ones. */
export function setEffectiveFeatureGates(settings: Readonly<Record<string, boolean>>): Readonly<Record<string, boolean>> {
  const previous = current;
  current = Object.freeze({ ...settings });
  return previous;
}

/** The process-wide gate settings (overrides only; defaults are not listed). */
export function effectiveFeatureGates(): Readonly<Record<string, boolean>> {
  return current;
}

/** Whether `name` is on in this process. Throws for a gate kube-proxy-ts does not know. */
export function featureEnabled(name: string): boolean {
  return isFeatureEnabled(current, name);
}
