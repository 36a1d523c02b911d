import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

/** This build's version (apps/proxy's package.json). */
export const KUBE_PROXY_TS_VERSION: string = pkg.version;

/** The Kubernetes minor whose kube-proxy behaviour this build follows. */
export const UPSTREAM_COMPATIBILITY = 'v1.37';

export function versionLine(): string {
  return `kube-proxy-ts v${pkg.version} (kube-proxy ${UPSTREAM_COMPATIBILITY} compatible, node ${process.version})`;
}
