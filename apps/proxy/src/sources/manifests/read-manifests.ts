import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];
/**
 * Never Kubernetes objects, found in folders that also hold manifests (an npm package beside them,
 * e.g. examples/plugins): a package's metadata and its installed dependencies.
 */
const NOT_MANIFESTS = new Set(['package.json', 'package-lock.json', 'tsconfig.json']);
const NOT_MANIFEST_DIRS = new Set(['node_modules']);

/**
 * Lists manifest files under `path` (a file, or a directory searched recursively, sorted so that
 * delivery order is deterministic). Hidden files and directories (editor swap files, `..data`
 * symlink farms of ConfigMap volumes are followed via their visible names) are skipped, and so are
 * npm package files and node_modules folders.
 */
export async function listManifestFiles(path: string): Promise<string[]> {
  const st = await stat(path);
  if (st.isFile()) return [path];
  const files: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 8) return; // a symlink loop must not hang startup
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.') || NOT_MANIFESTS.has(e.name) || NOT_MANIFEST_DIRS.has(e.name)) continue;
      const full = join(dir, e.name);
      const isDir = e.isDirectory() || (e.isSymbolicLink() && (await stat(full).catch(() => undefined))?.isDirectory());
      if (isDir) await walk(full, depth + 1);
      else if (MANIFEST_EXTENSIONS.some((ext) => e.name.endsWith(ext))) files.push(full);
    }
  };
  await walk(path, 0);
  return files;
}
