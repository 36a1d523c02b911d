/**
 * Installs packed tarballs into a clean directory as a consumer would. Third-party dependencies come from
 * the npm registry (or npm's cache); with neither reachable they are linked from the workspace's own
 * node_modules, so the test still proves the tarballs' contents on an offline machine.
 */
import { mkdirSync, readdirSync, existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCommand } from './run-command.js';
import type { PublishedLibrary } from './published-libraries.js';

export type InstallSource = 'registry' | 'npm-cache' | 'workspace-links';

export interface TarballToInstall {
  readonly tarball: string;
  readonly library: PublishedLibrary;
}

export async function installTarballs(consumerDir: string, items: readonly TarballToInstall[], workspaceRoot: string): Promise<InstallSource> {
  writeFileSync(join(consumerDir, 'package.json'), JSON.stringify({ name: 'tarball-consumer', private: true, type: 'module' }, null, 2));
  const tarballs = items.map((i) => i.tarball);
  const base = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'];
  const env = { ...process.env, NODE_OPTIONS: '' };
  try {
    await runCommand('npm', [...base, '--prefer-offline', ...tarballs], { cwd: consumerDir, timeoutMs: 40_000, env });
    return 'registry';
  } catch {
    try {
      await runCommand('npm', [...base, '--offline', ...tarballs], { cwd: consumerDir, timeoutMs: 20_000, env });
      return 'npm-cache';
    } catch {
      await linkFromWorkspace(consumerDir, items, workspaceRoot);
      return 'workspace-links';
    }
  }
}

async function linkFromWorkspace(consumerDir: string, items: readonly TarballToInstall[], workspaceRoot: string): Promise<void> {
  const modules = join(consumerDir, 'node_modules');
  for (const { tarball, library } of items) {
    const target = join(modules, library.packageName);
    mkdirSync(target, { recursive: true });
    await runCommand('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], { cwd: consumerDir, timeoutMs: 20_000 });
    // A library's nested node_modules holds the versions npm could not hoist (core's execa 9).
    linkEntries(join(library.dir, 'node_modules'), join(target, 'node_modules'));
  }
  linkEntries(join(workspaceRoot, 'node_modules'), modules);
}

/** Symlinks every package under `from` into `to` that `to` does not already hold (scopes one level down). */
function linkEntries(from: string, to: string): void {
  if (!existsSync(from)) return;
  for (const entry of readdirSync(from)) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(join(from, entry))) linkOne(join(from, entry, scoped), join(to, entry, scoped));
    } else {
      linkOne(join(from, entry), join(to, entry));
    }
  }
}

function linkOne(source: string, dest: string): void {
  if (existsSync(dest)) return;
  mkdirSync(dirname(dest), { recursive: true });
  symlinkSync(source, dest);
}
