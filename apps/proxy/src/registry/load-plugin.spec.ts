import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPluginModule } from './load-plugin.js';

describe('loadPluginModule', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-plugin-'));
    await writeFile(join(dir, 'named.mjs'), 'export const backend = { name: "named" };\n');
    await writeFile(join(dir, 'dflt.mjs'), 'export default { name: "dflt" };\n');
    await writeFile(join(dir, 'none.mjs'), 'export const other = 1;\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prefers the "backend" export, else the default export', async () => {
    expect(await loadPluginModule(join(dir, 'named.mjs'))).toEqual({ name: 'named' });
    expect(await loadPluginModule('./dflt.mjs', dir)).toEqual({ name: 'dflt' });
  });

  it('explains a module without a plugin export and a module that cannot be found', async () => {
    await expect(loadPluginModule(join(dir, 'none.mjs'))).rejects.toThrow(/exports neither "backend" nor a default export/);
    await expect(loadPluginModule('kube-proxy-backend-does-not-exist')).rejects.toThrow(/cannot load module/);
  });
});
