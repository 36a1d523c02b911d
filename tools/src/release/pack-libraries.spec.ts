import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installTarballs, type InstallSource } from './install-tarballs.js';
import { npmPack, type PackedTarball } from './npm-pack.js';
import { publishedLibraries, type PublishedLibrary } from './published-libraries.js';
import { runCommand } from './run-command.js';
import { tarballProblems } from './tarball-contents.js';
import { bareSpecifiers, undeclaredImports } from './undeclared-imports.js';

// Packs every library nx release publishes, installs the tarballs in a directory outside the workspace and
// imports each by name: what a third party gets from npm, not what the workspace's symlinks resolve.
const workspaceRoot = fileURLToPath(new URL('../../..', import.meta.url));
const libraries = publishedLibraries(workspaceRoot);
const consumerEnv = { ...process.env, NODE_OPTIONS: '' };
let scratch = '';
let consumer = '';
let source: InstallSource;
const packed = new Map<string, PackedTarball>();

beforeAll(async () => {
  const unbuilt = libraries.filter((l) => !existsSync(join(l.dir, 'dist', 'index.js')) || !existsSync(join(l.dir, 'dist', 'index.d.ts')));
  if (unbuilt.length > 0) {
    const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };
    await runCommand('npx', ['nx', 'run-many', '-t', 'build', '-p', ...libraries.map((l) => l.project), '--outputStyle=static'], { cwd: workspaceRoot, timeoutMs: 50_000, env });
  }
  scratch = mkdtempSync(join(tmpdir(), 'kpts-pack-'));
  consumer = mkdtempSync(join(tmpdir(), 'kpts-consumer-'));
  for (const lib of libraries) packed.set(lib.project, await npmPack(lib.dir, scratch));
  source = await installTarballs(consumer, libraries.map((library) => ({ tarball: packed.get(library.project)!.path, library })), workspaceRoot);
}, 58_000);

afterAll(() => {
  for (const dir of [scratch, consumer]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const manifestOf = (lib: PublishedLibrary) => JSON.parse(readFileSync(join(lib.dir, 'package.json'), 'utf8'));
const installedDir = (lib: PublishedLibrary) => join(consumer, 'node_modules', lib.packageName);
// The backend plugins (core and netfilter-iptables are libraries they build on, not plugins).
const backends = libraries.filter((l) => l.project.startsWith('backend-'));

/** Map sources missing from the tarball, split by whether the workspace still has them (orphans: it does not). */
function mapSources(lib: PublishedLibrary): { unpacked: string[]; orphans: string[] } {
  const unpacked: string[] = [];
  const orphans: string[] = [];
  for (const f of packed.get(lib.project)!.files.filter((p) => p.endsWith('.map'))) {
    const map = JSON.parse(readFileSync(join(installedDir(lib), f), 'utf8')) as { sources: string[] };
    for (const s of map.sources) {
      if (existsSync(resolve(dirname(join(installedDir(lib), f)), s))) continue;
      (existsSync(resolve(dirname(join(lib.dir, f)), s)) ? unpacked : orphans).push(`${f} → ${s}`);
    }
  }
  return { unpacked, orphans };
}

describe('published libraries (npm pack → clean install → import by name)', () => {
  it('covers core, netfilter-iptables and the four built-in backends', () => {
    expect(libraries.map((l) => l.packageName)).toEqual(expect.arrayContaining(['@kube-proxy/core', '@kube-proxy/netfilter-iptables', '@kube-proxy/backend-iptables', '@kube-proxy/backend-ipvs', '@kube-proxy/backend-nftables', '@kube-proxy/backend-userspace']));
    expect(['registry', 'npm-cache', 'workspace-links']).toContain(source);
  });

  it.each(libraries.map((l) => [l.packageName, l] as const))('%s: the tarball holds README, dist JS + .d.ts and every export target, and no specs, tsconfigs or build info', (_name, lib) => {
    const files = packed.get(lib.project)!.files;
    expect(tarballProblems(files, manifestOf(lib))).toEqual([]);
    expect(files.filter((f) => f.startsWith('src/') && f.endsWith('.spec.ts'))).toEqual([]);
  });

  it.each(libraries.map((l) => [l.packageName, l] as const))('%s: every bare import in its dist JS is a declared dependency', (_name, lib) => {
    const imports = packed
      .get(lib.project)!
      .files.filter((f) => f.startsWith('dist/') && f.endsWith('.js'))
      .flatMap((f) => bareSpecifiers(readFileSync(join(installedDir(lib), f), 'utf8')));
    expect(undeclaredImports(imports, manifestOf(lib))).toEqual([]);
  });

  it.each(libraries.map((l) => [l.packageName, l] as const))('%s: its source maps and declaration maps point at sources packed beside them', (_name, lib) => {
    const { unpacked } = mapSources(lib);
    expect(unpacked).toEqual([]);
  });

  it.each(libraries.map((l) => [l.packageName, l] as const))('%s: dist holds no output of a deleted source (tsc -b never removes them; publish from a clean build)', (_name, lib) => {
    const { orphans } = mapSources(lib);
    expect(orphans.length === 0 ? 'clean' : `stale outputs in ${lib.dir}/dist (rm -rf that dist, then nx run ${lib.project}:build): ${orphans.join(', ')}`).toBe('clean');
  });

  it('each backend, imported by package name from the clean install, exports a plugin with its name, the core API version and its package version', async () => {
    const script = `
      const core = await import('@kube-proxy/core');
      const out = { apiVersion: core.BACKEND_PLUGIN_API_VERSION, proxierBase: typeof core.ProxierBase, plugins: {} };
      for (const name of ${JSON.stringify(backends.map((b) => b.packageName))}) {
        const m = await import(name);
        const p = m.backend ?? m.default;
        out.plugins[name] = { name: p?.name, apiVersion: p?.apiVersion, version: p?.version, detect: typeof p?.detect, register: typeof p?.register };
      }
      console.log(JSON.stringify(out));`;
    const { stdout } = await runCommand(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, timeoutMs: 20_000, env: consumerEnv });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as { apiVersion: string; proxierBase: string; plugins: Record<string, Record<string, string>> };
    expect(out.apiVersion).toBe('kube-proxy.backend/v1');
    expect(out.proxierBase).toBe('function');
    for (const lib of backends) {
      expect(out.plugins[lib.packageName]).toEqual({ name: expect.stringMatching(/^[a-z]+$/), apiVersion: out.apiVersion, version: lib.version, detect: 'function', register: 'function' });
    }
  }, 25_000);

  it('a TypeScript consumer type-checks against the packed declarations (types resolve, not any)', async () => {
    const lines = [`import type { BackendPlugin } from '@kube-proxy/core';`];
    backends.forEach((b, i) => lines.push(`import b${i} from '${b.packageName}';`, `const p${i}: BackendPlugin = b${i};`, `// @ts-expect-error name is a string, so a resolved type refuses it as a number`, `export const n${i}: number = p${i}.name;`, `// @ts-expect-error the default export is typed, not any`, `export const x${i}: number = b${i};`));
    writeFileSync(join(consumer, 'consumer.ts'), lines.join('\n') + '\n');
    const tsc = join(workspaceRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const compilerOptions = { noEmit: true, strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true, types: [] };
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
    await expect(runCommand(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer, timeoutMs: 25_000, env: consumerEnv })).resolves.toBeDefined();
  }, 30_000);
});
