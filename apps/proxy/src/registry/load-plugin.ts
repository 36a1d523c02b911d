import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PluginContractError } from './backend-registry.js';

/**
 * Imports a third-party backend plugin by npm module specifier (or a path) and returns the object it
 * exports as `backend` (preferred) or as its default export. Validation happens in the registry.
 */
export async function loadPluginModule(specifier: string, cwd: string = process.cwd()): Promise<unknown> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pluginImportTarget(specifier, cwd))) as Record<string, unknown>;
  } catch (err) {
    throw new PluginContractError(`--backend-plugin=${specifier}: cannot load module: ${(err as Error).message}`);
  }
  const candidate = mod['backend'] ?? mod['default'];
  if (candidate === undefined) {
    throw new PluginContractError(`--backend-plugin=${specifier}: the module exports neither "backend" nor a default export`);
  }
  return candidate;
}

/**
 * What to import for a specifier. A path is taken relative to `cwd`. A bare package name is looked up
 * from `cwd` first: the operator installs plugins in their own project (`npm install my-backend`), and
 * an import() from this file would only search the proxy's install. A name not installed there is left
 * to the proxy's own resolution (plugins installed next to kube-proxy, workspace packages).
 */
export function pluginImportTarget(specifier: string, cwd: string): string {
  if (isPathLike(specifier)) return pathToFileURL(isAbsolute(specifier) ? specifier : resolve(cwd, specifier)).href;
  const found = resolveFrom(specifier, resolve(cwd));
  return found === undefined ? specifier : pathToFileURL(found).href;
}

function resolveFrom(specifier: string, dir: string): string | undefined {
  const req = createRequire(join(dir, 'noop.js'));
  try {
    return req.resolve(specifier);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw err;
    // require()'s conditions miss an ESM-only package's "import" export (Node says "not exported",
    // jest's require "not found"): read that entry ourselves.
    const found = resolveImportExport(specifier, req.resolve.paths(specifier) ?? []);
    if (found === null) throw err;
    return found;
  }
}

/** The conditions import() matches in Node (custom --conditions aside). */
const IMPORT_CONDITIONS = new Set(['node', 'import', 'module-sync', 'default']);

/**
 * The file a package's "exports" gives import() for `specifier`, in the first of `searchDirs`
 * (node_modules folders, nearest first) that holds the package. Exact subpaths only: a plugin's entry
 * point is never a `./*` pattern. Undefined: no such package there; null: the package is there but
 * exports nothing import() could load at that subpath.
 */
function resolveImportExport(specifier: string, searchDirs: readonly string[]): string | null | undefined {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  const subpath = '.' + specifier.slice(name.length);
  for (const dir of searchDirs) {
    const pkgDir = join(dir, name);
    let pkg: { exports?: unknown };
    try {
      pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { exports?: unknown };
    } catch {
      continue;
    }
    const exp = pkg.exports;
    const bySubpath = typeof exp === 'object' && exp !== null && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'));
    const entry = bySubpath ? (exp as Record<string, unknown>)[subpath] : subpath === '.' ? exp : undefined;
    const target = exportTarget(entry);
    return target === undefined ? null : join(pkgDir, target);
  }
  return undefined;
}

function exportTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry.startsWith('./') ? entry : undefined;
  if (Array.isArray(entry)) {
    for (const e of entry) {
      const t = exportTarget(e);
      if (t !== undefined) return t;
    }
    return undefined;
  }
  if (typeof entry !== 'object' || entry === null) return undefined;
  // Conditions match in the order the package lists them.
  for (const [condition, value] of Object.entries(entry)) {
    if (!IMPORT_CONDITIONS.has(condition)) continue;
    const t = exportTarget(value);
    if (t !== undefined) return t;
  }
  return undefined;
}

function isPathLike(s: string): boolean {
  return s.startsWith('.') || s.startsWith('/');
}
