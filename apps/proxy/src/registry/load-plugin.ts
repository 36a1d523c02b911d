import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import { PluginContractError } from './backend-registry.js';

/**
 * Imports a third-party backend plugin by npm module specifier (or a path) and returns the object it
 * exports as `backend` (preferred) or as its default export. Validation happens in the registry.
 */
export async function loadPluginModule(specifier: string, cwd: string = process.cwd()): Promise<unknown> {
  const target = isPathLike(specifier) ? pathToFileURL(isAbsolute(specifier) ? specifier : resolve(cwd, specifier)).href : specifier;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(target)) as Record<string, unknown>;
  } catch (err) {
    throw new PluginContractError(`--backend-plugin=${specifier}: cannot load module: ${(err as Error).message}`);
  }
  const candidate = mod['backend'] ?? mod['default'];
  if (candidate === undefined) {
    throw new PluginContractError(`--backend-plugin=${specifier}: the module exports neither "backend" nor a default export`);
  }
  return candidate;
}

function isPathLike(s: string): boolean {
  return s.startsWith('.') || s.startsWith('/');
}
