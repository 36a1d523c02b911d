import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { listManifestFiles } from './read-manifests.js';

describe('listManifestFiles', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kpts-manifests-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds YAML and JSON manifests recursively, sorted; skips hidden files, npm package files and node_modules', async () => {
    const files = ['b.yaml', 'a.yml', 'sub/c.json', '.swap.yaml', 'plugin/package.json', 'plugin/package-lock.json', 'plugin/node_modules/x/svc.yaml', 'plugin/svc.yaml', 'notes.txt'];
    for (const f of files) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), '{}');
    }
    const found = (await listManifestFiles(dir)).map((f) => relative(dir, f));
    expect(found).toEqual(['a.yml', 'b.yaml', 'plugin/svc.yaml', 'sub/c.json']);
  });
});
