import { BACKEND_PLUGIN_API_VERSION, type BackendPlugin, type DetectResult } from '@kube-proxy/core';
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * Userspace mode: an L4 proxy in this process. It needs only sockets (capture rules are optional), so
 * it is usable everywhere; the proxier is a separate roadmap item, so register() refuses clearly.
 */
export const userspaceBackend: BackendPlugin = {
  apiVersion: BACKEND_PLUGIN_API_VERSION,
  name: 'userspace',
  version: pkg.version,
  detect(): DetectResult {
    return { usable: true, reason: 'the userspace proxy needs only sockets; capture rules need iptables' };
  },
  register(): void {
    throw new Error(
      'the userspace proxier is not implemented in this version of kube-proxy-ts (it is on the roadmap); use --proxy-mode=iptables',
    );
  },
};
