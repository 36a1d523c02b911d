import type { Tree } from '@nx/devkit';
import { readJson } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { backendGenerator } from './generator.js';

/** An empty Nx workspace with what the generator reads from ours: core's package.json and the solution tsconfig. */
function workspace(): Tree {
  const tree = createTreeWithEmptyWorkspace();
  tree.write('libs/core/package.json', JSON.stringify({ name: '@kube-proxy/core', version: '0.1.0', dependencies: { tslib: '^2.9.1' } }));
  tree.write('tsconfig.json', JSON.stringify({ extends: './tsconfig.base.json', files: [], references: [{ path: './libs/core' }] }));
  return tree;
}

const ROOT = 'libs/backend-my-mode';

describe('backend generator', () => {
  it('creates the library: package, configs, README, plugin, proxier and specs', async () => {
    const tree = workspace();
    await backendGenerator(tree, { name: 'my-mode' });
    const files = tree.children(ROOT).sort();
    expect(files).toEqual(['README.md', 'eslint.config.mjs', 'jest.config.cjs', 'package.json', 'src', 'tsconfig.json', 'tsconfig.lib.json', 'tsconfig.spec.json']);
    expect(tree.children(`${ROOT}/src`).sort()).toEqual([
      'index.ts',
      'plugin.spec.ts',
      'plugin.ts',
      'proxier.spec.ts',
      'proxier.ts',
      'render-state.spec.ts',
      'render-state.ts',
    ]);
  });

  it('package.json: its own version, ESM, source and dist exports, a peer dependency on core, the backend tag', async () => {
    const tree = workspace();
    await backendGenerator(tree, { name: 'my-mode' });
    const pkg = readJson(tree, `${ROOT}/package.json`);
    expect(pkg).toMatchObject({
      name: '@kube-proxy/backend-my-mode',
      version: '0.1.0',
      type: 'module',
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: {
        '.': { '@kube-proxy/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
        './package.json': './package.json',
      },
      // The sources ship too: the declaration maps and the source export condition point at them.
      files: ['dist', '!dist/**/*.tsbuildinfo', 'src', '!src/**/*.spec.ts', 'README.md', 'CHANGELOG.md'],
      peerDependencies: { '@kube-proxy/core': '^0.1.0' },
      dependencies: { tslib: '^2.9.1' },
      nx: { name: 'backend-my-mode', tags: ['type:backend'] },
    });
    expect(pkg.dependencies['@kube-proxy/core']).toBeUndefined();
  });

  it('fills every template: the plugin is named for the mode and nothing of the template syntax is left', async () => {
    const tree = workspace();
    await backendGenerator(tree, { name: 'my-mode' });
    const plugin = tree.read(`${ROOT}/src/plugin.ts`, 'utf8') ?? '';
    expect(plugin).toContain("name: 'my-mode',");
    expect(plugin).toContain('export const myModeBackend = defineBackend<MyModePorts>({');
    expect(plugin).toContain("packageJson: new URL('../package.json', import.meta.url),");
    expect(tree.read(`${ROOT}/src/proxier.ts`, 'utf8')).toContain('export class MyModeProxier extends SyncingProxier {');
    expect(tree.read(`${ROOT}/jest.config.cjs`, 'utf8')).toContain("displayName: 'backend-my-mode'");
    const files = walk(tree, ROOT);
    expect(files.filter((f) => /<%|%>/.test(tree.read(f, 'utf8') ?? ''))).toEqual([]);
    expect(files.filter((f) => f.includes('__'))).toEqual([]);
  });

  it('keeps the module boundary of the other backends: core (and netfilter-iptables) through their entry points, test entry points from specs only', async () => {
    const tree = workspace();
    await backendGenerator(tree, { name: 'my-mode' });
    const eslint = tree.read(`${ROOT}/eslint.config.mjs`, 'utf8') ?? '';
    expect(eslint).toContain(
      "'@kube-proxy/core/*', '@kube-proxy/netfilter-iptables/*', '!@kube-proxy/core/testing', '!@kube-proxy/netfilter-iptables/testing', '**/core/src/**', '**/netfilter-iptables/src/**', '@kube-proxy/backend-*', '@kube-proxy/proxy', '@kube-proxy/tools*'",
    );
    expect(eslint).toContain("ignores: ['**/*.spec.ts', '**/testing/**']");
    expect(readJson(tree, `${ROOT}/tsconfig.lib.json`).references).toEqual([{ path: '../core/tsconfig.lib.json' }]);
  });

  it('adds the project to the root tsconfig.json references, after the existing ones', async () => {
    const tree = workspace();
    await backendGenerator(tree, { name: 'my-mode' });
    expect(readJson(tree, 'tsconfig.json').references).toEqual([{ path: './libs/core' }, { path: './libs/backend-my-mode' }]);
  });

  it('adds the project to nx release when the workspace lists its released projects', async () => {
    const tree = workspace();
    tree.write('nx.json', JSON.stringify({ release: { projects: ['core'] } }));
    await backendGenerator(tree, { name: 'my-mode' });
    expect(readJson(tree, 'nx.json').release.projects).toEqual(['core', 'backend-my-mode']);
    const plain = workspace();
    await backendGenerator(plain, { name: 'my-mode' });
    expect(readJson(plain, 'nx.json').release).toBeUndefined();
  });

  it('takes the peer range from the core in the workspace', async () => {
    const tree = workspace();
    tree.write('libs/core/package.json', JSON.stringify({ name: '@kube-proxy/core', version: '1.2.0' }));
    await backendGenerator(tree, { name: 'my-mode' });
    expect(readJson(tree, `${ROOT}/package.json`).peerDependencies).toEqual({ '@kube-proxy/core': '^1.2.0' });
  });

  it.each([
    ['My-Mode', /not a lower-case DNS label/],
    ['my_mode', /not a lower-case DNS label/],
    ['9lives', /not a lower-case DNS label/],
    ['mode-', /not a lower-case DNS label/],
    ['a'.repeat(64), /at most 63/],
    ['', /a name is required/],
    ['iptables', /built-in proxy mode/],
    ['nftables', /built-in proxy mode/],
  ])('refuses the name %j with a clear error and writes nothing', async (name, message) => {
    const tree = workspace();
    await expect(backendGenerator(tree, { name })).rejects.toThrow(message);
    expect(tree.listChanges().filter((c) => c.path.startsWith('libs/backend-'))).toEqual([]);
  });

  it('refuses to overwrite an existing library', async () => {
    const tree = workspace();
    await backendGenerator(tree, { name: 'my-mode' });
    await expect(backendGenerator(tree, { name: 'my-mode' })).rejects.toThrow('libs/backend-my-mode already exists');
  });

  it('refuses to run outside a workspace that has libs/core', async () => {
    await expect(backendGenerator(createTreeWithEmptyWorkspace(), { name: 'my-mode' })).rejects.toThrow(/libs\/core\/package.json not found/);
  });
});

function walk(tree: Tree, dir: string): string[] {
  return tree.children(dir).flatMap((child) => {
    const path = `${dir}/${child}`;
    return tree.isFile(path) ? [path] : walk(tree, path);
  });
}
