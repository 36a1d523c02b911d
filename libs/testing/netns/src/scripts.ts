import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type HarnessScript = 'echo-server.mjs' | 'probe.mjs' | 'watchdog.mjs' | 'userspace-stream.mjs';

/**
 * Locates a plain-Node script of this folder. They are not compiled, so when running from
 * `dist/` fall back to `src/`.
 */
export function scriptPath(name: HarnessScript): string {
  const here = fileURLToPath(new URL(`./${name}`, import.meta.url));
  if (existsSync(here)) return here;
  const fromDist = fileURLToPath(new URL(`../src/${name}`, import.meta.url));
  if (existsSync(fromDist)) return fromDist;
  throw new Error(`cannot find ${name} next to ${fileURLToPath(import.meta.url)}`);
}
