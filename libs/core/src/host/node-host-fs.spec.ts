import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeHostFs } from './node-host-fs.js';

describe('NodeHostFs', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'kp-hostfs-'));
    await mkdir(join(root, 'proc/net'), { recursive: true });
    await writeFile(join(root, 'proc/net/ip_vs'), 'IP Virtual Server version 1.2.1\n');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('probes files under its root', async () => {
    const fs = new NodeHostFs(root, () => '5.15.0-test');
    expect(await fs.exists('/proc/net/ip_vs')).toBe(true);
    expect(await fs.exists('/proc/net')).toBe(true);
    expect(await fs.exists('/proc/modules')).toBe(false);
    expect((await fs.readFile('/proc/net/ip_vs'))?.toString()).toContain('IP Virtual Server');
    expect(await fs.readFile('/nope')).toBeUndefined();
    expect(fs.kernelRelease()).toBe('5.15.0-test');
  });

  it('defaults to / and the running kernel', async () => {
    const fs = new NodeHostFs();
    expect(fs.kernelRelease()).toBe(release());
    expect(await fs.exists('/proc/self')).toBe(true);
  });
});
