/**
 * The libraries `nx release` publishes, read from nx.json's release.projects so that a library added to the
 * release is packed and import-tested without editing the test.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export interface PublishedLibrary {
  /** Nx project name, as in nx.json release.projects. */
  readonly project: string;
  readonly packageName: string;
  readonly version: string;
  /** Absolute path of the library's root. */
  readonly dir: string;
}

export function publishedLibraries(workspaceRoot: string): PublishedLibrary[] {
  const nxJson = JSON.parse(readFileSync(join(workspaceRoot, 'nx.json'), 'utf8')) as { release?: { projects?: string[] | string } };
  const wanted = [nxJson.release?.projects ?? []].flat();
  const byProject = new Map<string, PublishedLibrary>();
  const libsDir = join(workspaceRoot, 'libs');
  for (const entry of readdirSync(libsDir)) {
    const manifestPath = join(libsDir, entry, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const pkg = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name: string; version: string; nx?: { name?: string } };
    const project = pkg.nx?.name ?? pkg.name;
    byProject.set(project, { project, packageName: pkg.name, version: pkg.version, dir: join(libsDir, entry) });
  }
  return wanted.map((project) => {
    const lib = byProject.get(project);
    if (!lib) throw new Error(`nx.json release.projects names "${project}", which is no library under libs/`);
    return lib;
  });
}
