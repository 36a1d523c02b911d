/**
 * A user's project outside the workspace, as a plugin's user would have it: `npm pack` of core and of
 * a plugin package, both installed from the tarballs into a fresh directory under the OS temp dir
 * (so nothing resolves through the workspace's node_modules by accident), and the repo's
 * bin/kube-proxy run with that directory as its working directory.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const KUBE_PROXY_BIN = join(REPO_ROOT, 'bin', 'kube-proxy');

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `cmd args` (no shell) to completion; killed after `timeoutMs`. */
export function runCommand(cmd: string, args: readonly string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment without npm's own variables: under `npm test` they carry the workspace's settings
 * (npm_config_local_prefix and the like), which a nested npm would read as its config and so install
 * into the workspace instead of the user's project.
 */
export function envWithoutNpm(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

async function mustRun(cmd: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<RunResult> {
  const r = await runCommand(cmd, args, { cwd, env: envWithoutNpm(), timeoutMs });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.code}:\n${r.stderr.slice(-3000)}`);
  return r;
}

/**
 * Packs each workspace-relative package directory into a new temp project and installs the tarballs
 * there. Core's own runtime dependencies come from npm's cache when it has them (`--prefer-offline`),
 * else from the registry. Returns the project directory.
 */
export async function createProjectWith(packageDirs: readonly string[], timeoutMs: number): Promise<string> {
  for (const dir of packageDirs) {
    if (!existsSync(join(REPO_ROOT, dir, 'package.json'))) throw new Error(`no package at ${dir}`);
  }
  const project = await mkdtemp(join(tmpdir(), 'kp-oot-'));
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1000, deadline - Date.now());
  // "./" keeps npm from reading "libs/core" as a GitHub shorthand (it then packs nothing and says nothing).
  await mustRun('npm', ['pack', ...packageDirs.map((d) => `./${d}`), '--pack-destination', project, '--silent'], REPO_ROOT, left());
  const tarballs = (await readdir(project)).filter((f) => f.endsWith('.tgz')).sort();
  if (tarballs.length !== packageDirs.length) throw new Error(`npm pack made ${tarballs.join(', ') || 'nothing'} for ${packageDirs.join(', ')}`);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'kp-oot-user', version: '1.0.0', private: true, type: 'module' }, null, 2));
  await mustRun('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs.map((t) => `./${t}`)], project, left());
  return project;
}
