import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The Kubernetes minor whose kube-proxy behaviour this build follows. */
export const UPSTREAM_COMPATIBILITY = 'v1.34';

export function versionLine(): string {
  return `kube-proxy-ts v${pkg.version} (kube-proxy ${UPSTREAM_COMPATIBILITY} compatible, node ${process.version})`;
}
