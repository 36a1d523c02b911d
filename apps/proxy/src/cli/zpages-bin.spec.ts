import { spawn } from 'node:child_process';
import { httpGet } from '../agent/testing/http-get.js';
import { KUBE_PROXY_BIN, REPO_ROOT, freePort } from './testing/kube-proxy-bin.js';

// A running bin/kube-proxy (--dry-run, so it changes nothing) serves /statusz and /flagz on its
// metrics address, and stops serving a page whose gate is turned off.

async function withProxy(extra: readonly string[], check: (port: number) => Promise<void>): Promise<void> {
  const port = await freePort();
  const args = ['--proxy-mode=iptables', '--manifests=examples', '--hostname-override=node-1', '--dry-run', `--metrics-bind-address=127.0.0.1:${port}`, ...extra];
  const child = spawn(KUBE_PROXY_BIN, args, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'ignore'] });
  try {
    // Bounded: 60 tries, 0.5 s apart, until the metrics server answers.
    let up = false;
    for (let i = 0; i < 60 && !up; i++) {
      await new Promise((r) => setTimeout(r, 500));
      up = (await httpGet(port, '/healthz').catch(() => undefined))?.status === 200;
    }
    expect(up).toBe(true);
    await check(port);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

describe('bin/kube-proxy serves /statusz and /flagz on its metrics address', () => {
  it('both pages by default, as text', async () => {
    await withProxy(['--iptables-sync-period=45s'], async (port) => {
      const statusz = await httpGet(port, '/statusz');
      expect(statusz.status).toBe(200);
      expect(statusz.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(statusz.body).toMatch(/^\nkube-proxy statusz\nWarning: This endpoint is not meant to be machine parseable/);
      expect(statusz.body).toMatch(/^Started: \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d UTC \d{4}$/m);
      expect(statusz.body).toMatch(/^Up: \d+ hr \d\d min \d\d sec$/m);
      expect(statusz.body).toContain('Emulation version: 1.37\n');
      const flagz = await httpGet(port, '/flagz');
      expect(flagz.status).toBe(200);
      expect(flagz.body).toMatch(/^\nkube-proxy flags\n/);
      expect(flagz.body).toContain('\niptables-sync-period=45s\n');
      expect(flagz.body).toContain(`\nmetrics-bind-address=127.0.0.1:${port}\n`);
      expect(flagz.body).toContain('\nproxy-mode=iptables\n');
      expect(flagz.body).toContain('\nmasquerade-all=false\n');
    });
  }, 90_000);

  it('a page whose gate is off answers 404', async () => {
    await withProxy(['--feature-gates=ComponentFlagz=false'], async (port) => {
      expect((await httpGet(port, '/flagz')).status).toBe(404);
      expect((await httpGet(port, '/statusz')).status).toBe(200);
    });
  }, 90_000);
});
