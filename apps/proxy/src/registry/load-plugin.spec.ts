import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadPluginModule, pluginImportTarget } from './load-plugin.js';

/** Writes node_modules/<name> under `project` with the given package.json fields and one entry file. */
async function installFake(project: string, name: string, pkg: Record<string, unknown>, file: string, body: string): Promise<void> {
  const dir = join(project, 'node_modules', name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', ...pkg }));
  await writeFile(join(dir, file), body);
}

describe('loadPluginModule', () => {
  let dir: string;
  let project: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-plugin-'));
    await writeFile(join(dir, 'named.mjs'), 'export const backend = { name: "named" };\n');
    await writeFile(join(dir, 'dflt.mjs'), 'export default { name: "dflt" };\n');
    await writeFile(join(dir, 'none.mjs'), 'export const other = 1;\n');
    project = join(dir, 'project');
    await installFake(project, 'kp-fake-default', { exports: { '.': { types: './x.d.ts', default: './entry.js' } } }, 'entry.js', 'export const backend = { name: "from-cwd" };\n');
    await installFake(project, 'kp-fake-import-only', { exports: { '.': { import: './esm.js' }, './package.json': './package.json' } }, 'esm.js', 'export default { name: "import-only" };\n');
    await installFake(project, '@kp-fake/scoped', { exports: { './extra': { node: { import: './extra.js' } } } }, 'extra.js', 'export const backend = { name: "scoped-subpath" };\n');
    // Named like a workspace package: the operator's copy must win over the proxy's own.
    await installFake(project, '@kube-proxy/backend-userspace', { main: './shadow.js' }, 'shadow.js', 'export const backend = { name: "shadow" };\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prefers the "backend" export, else the default export', async () => {
    expect(await loadPluginModule(join(dir, 'named.mjs'))).toEqual({ name: 'named' });
    expect(await loadPluginModule('./dflt.mjs', dir)).toEqual({ name: 'dflt' });
  });

  it('explains a module without a plugin export and a module that cannot be found', async () => {
    await expect(loadPluginModule(join(dir, 'none.mjs'))).rejects.toThrow(
      `--backend-plugin=${join(dir, 'none.mjs')}: the module exports neither "backend" nor a default export`,
    );
    await expect(loadPluginModule('kube-proxy-backend-does-not-exist', project)).rejects.toThrow(
      /^--backend-plugin=kube-proxy-backend-does-not-exist: cannot load module: Cannot find (package|module) 'kube-proxy-backend-does-not-exist'/,
    );
  });

  it('resolves a bare package name from the working directory, not from the proxy\'s install', async () => {
    expect(await loadPluginModule('kp-fake-default', project)).toEqual({ name: 'from-cwd' });
    expect(await loadPluginModule('@kube-proxy/backend-userspace', project)).toEqual({ name: 'shadow' });
    expect(pluginImportTarget('kp-fake-default', project)).toBe(pathToFileURL(join(project, 'node_modules', 'kp-fake-default', 'entry.js')).href);
  });

  it('finds the "import" export of an ESM-only package, also under a subpath and nested conditions', async () => {
    expect(await loadPluginModule('kp-fake-import-only', project)).toEqual({ name: 'import-only' });
    expect(await loadPluginModule('@kp-fake/scoped/extra', join(project, 'node_modules'))).toEqual({ name: 'scoped-subpath' });
  });

  it('says so when an installed package exports nothing import() can load', async () => {
    await expect(loadPluginModule('kp-fake-import-only/missing', project)).rejects.toThrow(/^--backend-plugin=kp-fake-import-only\/missing: cannot load module: /);
  });

  it('falls back to the proxy\'s own resolution for a name the working directory does not have', async () => {
    const plugin = (await loadPluginModule('@kube-proxy/backend-userspace', dir)) as { name: string; apiVersion: string };
    expect(plugin.name).toBe('userspace');
    expect(pluginImportTarget('@kube-proxy/backend-userspace', dir)).toBe('@kube-proxy/backend-userspace');
  });
});
