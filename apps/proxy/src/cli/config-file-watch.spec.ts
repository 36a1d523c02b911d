import { mkdtemp, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigFileWatch } from './config-file-watch.js';

describe('ConfigFileWatch', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-cfgwatch-'));
    file = join(dir, 'config.yaml');
    await writeFile(file, 'mode: iptables\n');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function until(cond: () => boolean, ms = 3000): Promise<void> {
    const end = Date.now() + ms;
    while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }

  it('ignores a touch that leaves the content alone, fires once on a real change', async () => {
    const reasons: string[] = [];
    const w = new ConfigFileWatch(file, 'mode: iptables\n', (r) => reasons.push(r), 100);
    w.start();
    const t = new Date();
    await utimes(file, t, t);
    await new Promise((r) => setTimeout(r, 300));
    expect(reasons).toEqual([]);
    await writeFile(file, 'mode: ipvs\n');
    await until(() => reasons.length > 0);
    await writeFile(file, 'mode: nftables\n');
    await new Promise((r) => setTimeout(r, 300));
    w.stop();
    expect(reasons).toEqual([`config file ${file} changed`]);
  });

  it('fires when the file is removed', async () => {
    const reasons: string[] = [];
    const w = new ConfigFileWatch(file, 'mode: iptables\n', (r) => reasons.push(r), 100);
    w.start();
    await unlink(file);
    await until(() => reasons.length > 0);
    w.stop();
    expect(reasons[0]).toMatch(/is gone or unreadable: ENOENT/);
  });
});
