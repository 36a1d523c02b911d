/**
 * How the benchmarks start the proxy. The app itself is resolved through its package entry
 * (`@kube-proxy/proxy`, the built dist/main.js under plain Node), never by a path into apps/proxy;
 * bin/kube-proxy is the repository's launcher of that build, with the V8/glibc memory settings the
 * memory benchmarks measure, so it is found from the repository root.
 */
import { fileURLToPath } from 'node:url';

/** The repository root (tools/bench/{src,dist}/shared → ../../../../). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** bin/kube-proxy: first-use install/build, memory settings, then the built app. */
export const KUBE_PROXY_BIN = fileURLToPath(new URL('../../../../bin/kube-proxy', import.meta.url));

/** The built app's main module, as its package entry resolves for Node. */
export function proxyMainJs(): string {
  return fileURLToPath(import.meta.resolve('@kube-proxy/proxy'));
}
