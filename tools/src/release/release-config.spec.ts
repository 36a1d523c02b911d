import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishedLibraries } from './published-libraries.js';

// The release contract the README promises, read from nx.json: `nx release` itself is shown by its dry-run
// (README "Releases"), which needs git history and takes ~20 s, so this spec pins the configuration.
const workspaceRoot = fileURLToPath(new URL('../../..', import.meta.url));
interface ReleaseConfig {
  projects: string[];
  projectsRelationship: string;
  releaseTag: { pattern: string };
  version: Record<string, unknown>;
  changelog: Record<string, unknown>;
}
const release = (JSON.parse(readFileSync(join(workspaceRoot, 'nx.json'), 'utf8')) as { release: ReleaseConfig }).release;

describe('nx release configuration', () => {
  it('versions each published library independently from conventional commits and bumps dependents of a bumped core', () => {
    expect(release.projectsRelationship).toBe('independent');
    expect(release.version).toMatchObject({ conventionalCommits: true, fallbackCurrentVersionResolver: 'disk', updateDependents: 'always' });
  });

  it('releases only public libraries (the app and tools are private and never published)', () => {
    for (const lib of publishedLibraries(workspaceRoot)) {
      const pkg = JSON.parse(readFileSync(join(lib.dir, 'package.json'), 'utf8')) as { private?: boolean; publishConfig?: { access?: string } };
      expect(pkg.private).toBeUndefined();
      expect(pkg.publishConfig?.access).toBe('public');
    }
    expect(release.projects).not.toEqual(expect.arrayContaining(['proxy']));
    expect(release.projects).not.toEqual(expect.arrayContaining(['tools']));
  });

  it('writes one CHANGELOG.md per library and no workspace changelog', () => {
    expect(release.changelog).toMatchObject({ workspaceChangelog: false, projectChangelogs: { file: '{projectRoot}/CHANGELOG.md' } });
  });

  it('tags each release with the npm package name, e.g. @kube-proxy/core@0.2.0', () => {
    const pattern = release.releaseTag.pattern;
    const tags = publishedLibraries(workspaceRoot).map((l) => ({ tag: pattern.replace('{projectName}', l.project).replace('{version}', '0.2.0'), want: `${l.packageName}@0.2.0` }));
    for (const { tag, want } of tags) expect(tag).toBe(want);
  });
});
