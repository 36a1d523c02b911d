import { mkdtemp, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@kube-proxy/core/testing';
import { ManifestFiles } from './manifest-files.js';
import type { ManifestObject } from './parse-manifests.js';

const names = (objects: ManifestObject[] | undefined) => objects?.map((o) => o.metadata?.name);
const svc = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;

describe('ManifestFiles', () => {
  let dir: string;
  let logger: RecordingLogger;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-mfiles-'));
    logger = new RecordingLogger();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const tracker = () => new ManifestFiles<ManifestObject[]>(dir, (_file, objects) => objects, logger);

  it('reads every file at load, then nothing until a file changes', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('a'));
    const files = tracker();
    const loaded = await files.load();
    expect(loaded.changes.map((c) => [c.before, names(c.after)])).toEqual([[undefined, ['a']]]);
    for (let i = 0; i < 3; i++) expect(await files.settledCheck()).toEqual({ files: [join(dir, 'a.yaml')], changes: [], unsettled: false });
  });

  it('reads a new or changed file only when a second check finds its stat unchanged', async () => {
    const files = tracker();
    await files.load();
    await writeFile(join(dir, 'b.yaml'), svc('b1'));
    expect(await files.settledCheck()).toMatchObject({ changes: [], unsettled: true });
    await writeFile(join(dir, 'b.yaml'), svc('b1') + '---\n' + svc('b2'));
    expect(await files.settledCheck()).toMatchObject({ changes: [], unsettled: true });
    const settled = await files.settledCheck();
    expect(settled.unsettled).toBe(false);
    expect(settled.changes.map((c) => [c.before, names(c.after)])).toEqual([[undefined, ['b1', 'b2']]]);
  });

  it('reports a removed file with the objects it had', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('a'));
    const files = tracker();
    await files.load();
    await unlink(join(dir, 'a.yaml'));
    const result = await files.settledCheck();
    expect(result.files).toEqual([]);
    expect(result.changes.map((c) => [names(c.before), c.after])).toEqual([[['a'], undefined]]);
  });
});
