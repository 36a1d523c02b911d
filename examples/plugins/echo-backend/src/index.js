/**
 * kube-proxy-echo-backend: an out-of-tree backend plugin for kube-proxy-ts, written against the
 * published plugin contract only (@kube-proxy/core's public API). Load it with
 * `kube-proxy --backend-plugin=kube-proxy-echo-backend --proxy-mode=echo`.
 */
import { createRequire } from 'node:module';
import { CLOCK, DualStackProvider, LOGGER, PROVIDER, resolveObservers } from '@kube-proxy/core';
import { EchoProxier } from './echo-proxier.js';
import { EchoStateFile } from './state-file.js';

const pkg = /** @type {{ version: string }} */ (createRequire(import.meta.url)('../package.json'));

/** Where the state file goes when no option names it. */
export const STATE_ENV = 'KUBE_PROXY_ECHO_STATE';

/**
 * The contract version this plugin was written against. Spelled out rather than imported from core:
 * core's constant is whatever the installed core speaks, so importing it would make the host's
 * version check pass for a plugin that was never written for that contract.
 */
const API_VERSION = 'kube-proxy.backend/v1';

/**
 * @typedef {object} EchoBackendOptions
 * @property {string} [statePath] the state file; default: $KUBE_PROXY_ECHO_STATE, else none (memory only)
 */

/**
 * Builds the plugin object. A site that wants another state path (or several echo instances) wraps
 * this in its own module and exports the result as `backend`.
 * @param {EchoBackendOptions} [options]
 * @returns {import('@kube-proxy/core').BackendPlugin}
 */
export function createEchoBackend(options = {}) {
  return {
    apiVersion: API_VERSION,
    name: 'echo',
    version: pkg.version,
    detect() {
      return { usable: true, reason: 'the echo backend programs nothing on the host' };
    },
    register(container, context) {
      const families = context.families;
      if (families.length === 0 || families.length > 2) {
        throw new Error(`echo backend: expected one or two IP families, got ${JSON.stringify(families)}`);
      }
      const logger = container.resolve(LOGGER).child({ backend: 'echo' });
      const statePath = options.statePath ?? (process.env[STATE_ENV] || undefined);
      const stateFile = new EchoStateFile(statePath, { name: 'echo', version: pkg.version });
      const ports = { context, clock: container.resolve(CLOCK), logger, observers: resolveObservers(container), stateFile };
      const proxiers = new Map(families.map((family) => [family, new EchoProxier({ ...ports, family })]));
      logger.info('Echo backend registered', { statePath: statePath ?? '(none)', families });
      const ipv4 = proxiers.get('IPv4');
      const ipv6 = proxiers.get('IPv6');
      // DualStackProvider takes its proxiers by family, whichever is the primary.
      const provider = ipv4 && ipv6 ? new DualStackProvider(ipv4, ipv6) : (ipv4 ?? ipv6);
      container.register(PROVIDER, { useValue: provider });
    },
  };
}

/** The plugin kube-proxy loads: the state file from $KUBE_PROXY_ECHO_STATE. */
export const backend = createEchoBackend();
export default backend;
