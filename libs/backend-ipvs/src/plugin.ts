import {
  BACKEND_PLUGIN_API_VERSION,
  type BackendPlugin,
  type DetectResult,
  type HostCapabilities,
} from '@kube-proxy/core';
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * IPVS mode. Detection is real (it decides whether `auto` picks IPVS); the proxier itself is the next
 * roadmap item, so register() refuses clearly instead of pretending to program IPVS.
 */
export const ipvsBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'ipvs',
  version: pkg.version,
  detect(host: HostCapabilities): DetectResult {
    if (!host.ipvs.available) return { usable: false, reason: host.ipvs.reason };
    return { usable: true, reason: host.ipvs.reason };
  },
  register(): void {
    throw new Error(
      'the ipvs proxier is not implemented in this version of kube-proxy-ts (it is on the roadmap); use --proxy-mode=iptables',
    );
  },
};
