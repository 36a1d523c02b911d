import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/*
 * A throw-away copy of the workspace for end-to-end checks of generators: the sources as git sees
 * them (tracked and untracked-but-not-ignored, so work in progress is included), and node_modules
 * linked entry by entry rather than as one link: the workspace packages (@kube-proxy/*) must point at
 * the copy's libraries, or tsc and jest would resolve core to the original checkout.
 */

export interface TempWorkspace {
  readonly root: string;
  remove(): void;
}

export interface StepResult {
  readonly step: string;
  readonly code: number | null;
  /** The last lines of stdout and stderr, for the assertion message. */
  readonly output: string;
}

const WORKSPACE_SCOPE = '@kube-proxy';

/** Copies `source` (a git work tree with node_modules) to a new temp dir, leaving out `exclude`d paths. */
export function copyWorkspace(source: string, exclude: (path: string) => boolean = () => false): TempWorkspace {
  const root = mkdtempSync(join(tmpdir(), 'kpts-gen-e2e-'));
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: source, maxBuffer: 64 * 1024 * 1024 });
    for (const path of listed.toString('utf8').split('\0')) {
      if (path === '' || path.startsWith('node_modules/') || path.split('/').includes('dist') || exclude(path)) continue;
      const from = join(source, path);
      // Tracked files deleted in the work tree are still listed.
      if (!existsSync(from)) continue;
      mkdirSync(dirname(join(root, path)), { recursive: true });
      copyFileSync(from, join(root, path));
    }
    linkNodeModules(join(source, 'node_modules'), join(root, 'node_modules'));
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

function linkNodeModules(from: string, to: string): void {
  mkdirSync(to);
  for (const entry of readdirSync(from)) {
    // .cache holds tools' caches: the copy gets its own.
    if (entry === WORKSPACE_SCOPE || entry === '.cache') continue;
    symlinkSync(join(from, entry), join(to, entry));
  }
  const scope = join(from, WORKSPACE_SCOPE);
  if (!existsSync(scope)) return;
  mkdirSync(join(to, WORKSPACE_SCOPE));
  // npm links workspace packages relatively (../../libs/core): the same link resolves inside the copy.
  for (const entry of readdirSync(scope)) symlinkSync(readlinkSync(join(scope, entry)), join(to, WORKSPACE_SCOPE, entry));
}

/**
 * The environment of a nested Nx run: none of the outer Nx task's variables (they name the outer
 * task and workspace), no jest worker, no inherited NODE_OPTIONS; no daemon, no cloud, no colours.
 */
export function nestedNxEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('NX_') || key.startsWith('JEST_') || key === 'NODE_OPTIONS' || key === 'FORCE_COLOR') continue;
    env[key] = value;
  }
  return { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NO_COLOR: '1', FORCE_COLOR: '0', CI: 'true' };
}

/** Runs one step (argument array, no shell) in `cwd`, bounded by `timeoutMs`. Never rejects. */
export function runStep(step: string, command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<StepResult> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd, env: nestedNxEnv(), timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n');
      resolve({ step, code, output: tail });
    });
  });
}
