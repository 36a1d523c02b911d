import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The built entry of this library: test-apiserver-host.mjs imports it, so a caller checks it exists
 * (and says "build first") before spawning the host.
 */
export const BUILT_TEST_APISERVER = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/**
 * test-apiserver-host.mjs: hosts a TestApiServer in whatever network namespace it is started in (run it
 * under `ip netns exec`). It is plain Node and not compiled, so from `dist/` it is found in `src/`.
 */
export function testApiServerHostScript(): string {
  const here = fileURLToPath(new URL('./test-apiserver-host.mjs', import.meta.url));
  if (existsSync(here)) return here;
  const fromDist = fileURLToPath(new URL('../src/test-apiserver-host.mjs', import.meta.url));
  if (existsSync(fromDist)) return fromDist;
  throw new Error(`cannot find test-apiserver-host.mjs next to ${fileURLToPath(import.meta.url)}`);
}
