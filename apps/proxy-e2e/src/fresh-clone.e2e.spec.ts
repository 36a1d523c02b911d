/**
 * The README's first command on a fresh clone, with nothing run before it: `git clone` of this
 * checkout's HEAD into a temp dir, then `bin/kube-proxy --proxy-mode=iptables --manifests=examples
 * --hostname-override=node-1 --dry-run --once` there. bin/kube-proxy installs the npm dependencies
 * (npm ci; the npm cache makes it quick) and builds the app, saying so on stderr, and prints the
 * rules on stdout. Needs no root. Uncommitted changes are not in the clone: this checks HEAD.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './support/proxy.js';

const hasGit = spawnSync('git', ['-C', REPO_ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).status === 0;
const describeGit = hasGit ? describe : describe.skip;

describeGit('a fresh clone in two commands (README)', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kpts-fresh-clone-'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('bin/kube-proxy installs, builds and prints the dry run, with nothing run before it', () => {
    const clone = join(dir, 'repo');
    const c = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', REPO_ROOT, clone], { encoding: 'utf8' });
    expect(c.status).toBe(0);
    expect(existsSync(join(clone, 'node_modules'))).toBe(false);
    const started = Date.now();
    const r = spawnSync(join(clone, 'bin', 'kube-proxy'), ['--proxy-mode=iptables', '--manifests=examples', '--hostname-override=node-1', '--dry-run', '--once'], {
      cwd: clone,
      encoding: 'utf8',
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`fresh clone → first dry run: ${seconds} s (npm ci + nx build proxy + the run)`);
    if (r.status !== 0) throw new Error(`exit ${String(r.status)} ${String(r.signal)}\n${r.stderr.slice(-4000)}`);
    expect(r.stderr).toMatch(/installing the npm dependencies \(npm ci/);
    expect(r.stderr).toMatch(/building it now/);
    expect(r.stdout).toMatch(/^# sync 1 full /m);
    expect(r.stdout).toContain('-A KUBE-SERVICES');
    // stdout carries only the dry run: every install and build line went to stderr.
    expect(r.stdout).not.toMatch(/npm|nx run|added \d+ packages/);
  }, 320_000);
});
