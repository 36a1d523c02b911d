import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OCI_LAYER_GZIP, verifyOciLayout } from './oci-layout.js';

const WRITER = fileURLToPath(new URL('../../../deploy/image/write-oci-layout.sh', import.meta.url));

function run(command: string, args: string[], env: Record<string, string> = {}): { code: number | null; stderr: string } {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...env } });
  return { code: r.status, stderr: r.stderr };
}

describe('write-oci-layout.sh on a tiny fake layer', () => {
  let dir = '';
  let layerTar = '';
  const env = { SOURCE_DATE_EPOCH: '0', IMAGE_ARCH: 'x86_64' };

  function writeLayout(name: string, tag = '1.2.3'): string {
    const out = join(dir, name);
    const r = run('bash', [WRITER, layerTar, out, tag], env);
    if (r.code !== 0) throw new Error(`write-oci-layout.sh exited ${r.code}: ${r.stderr}`);
    return out;
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kpts-oci-'));
    mkdirSync(join(dir, 'root', 'usr', 'local', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'root', 'usr', 'local', 'bin', 'kube-proxy'), '#!/bin/true\n');
    layerTar = join(dir, 'layer.tar');
    const r = run('tar', ['-C', join(dir, 'root'), '--sort=name', '-cf', layerTar, '.']);
    if (r.code !== 0) throw new Error(`tar failed: ${r.stderr}`);
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes a layout whose descriptors match their blobs, with the layer uncompressed hash as diff_id', async () => {
    const layout = writeLayout('ok');
    const image = await verifyOciLayout(layout);
    expect(image.tag).toBe('1.2.3');
    expect(image.manifest.layers.map((l) => l.mediaType)).toEqual([OCI_LAYER_GZIP]);
    expect(image.config).toMatchObject({
      architecture: 'amd64',
      os: 'linux',
      created: '1970-01-01T00:00:00Z',
      config: { Entrypoint: ['/usr/local/bin/kube-proxy'] },
    });
    expect(readdirSync(join(layout, 'blobs', 'sha256'))).toHaveLength(3);
    expect(readdirSync(layout).sort()).toEqual(['blobs', 'index.json', 'oci-layout']);
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8'));
    expect(index.manifests[0].annotations['io.containerd.image.name']).toBe('kube-proxy-ts:1.2.3');
  });

  it('gives the same digests for the same layer and time (gzip without name or mtime)', () => {
    const a = JSON.parse(readFileSync(join(writeLayout('again-a'), 'index.json'), 'utf8'));
    const b = JSON.parse(readFileSync(join(writeLayout('again-b'), 'index.json'), 'utf8'));
    expect(b.manifests[0].digest).toBe(a.manifests[0].digest);
  });

  it('is caught by the verifier when a layer blob is altered', async () => {
    const layout = writeLayout('tampered');
    const image = await verifyOciLayout(layout);
    const blob = image.layerPaths[0]!;
    const bytes = readFileSync(blob);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(blob, bytes);
    await expect(verifyOciLayout(layout)).rejects.toThrow(/layer 0: blob hashes to sha256:[0-9a-f]{64}, descriptor says/);
  });

  it('is caught by the verifier when index.json names another manifest', async () => {
    const layout = writeLayout('wrong-index');
    const path = join(layout, 'index.json');
    const index = JSON.parse(readFileSync(path, 'utf8'));
    index.manifests[0].size += 1;
    writeFileSync(path, JSON.stringify(index));
    await expect(verifyOciLayout(layout)).rejects.toThrow(/manifest: blob is \d+ bytes, descriptor says/);
  });

  it('refuses a tag that would need JSON escaping, and an existing layout directory', () => {
    expect(run('bash', [WRITER, layerTar, join(dir, 'bad-tag'), 'a"b'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('bad tag') });
    const existing = join(dir, 'exists');
    mkdirSync(existing);
    expect(run('bash', [WRITER, layerTar, existing, '1'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('already exists') });
  });
});
