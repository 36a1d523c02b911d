import { exportTargets, tarballProblems } from './tarball-contents.js';

const manifest = {
  name: '@kube-proxy/backend-x',
  main: './dist/index.js',
  types: './dist/index.d.ts',
  exports: { '.': { '@kube-proxy/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
};
const good = ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/plugin.js', 'dist/plugin.d.ts'];

describe('tarballProblems', () => {
  it('accepts a tarball with README, dist JS and declarations and every export target', () => {
    expect(tarballProblems(good, manifest)).toEqual([]);
  });

  it('does not require the workspace-only source condition target (consumers never select it)', () => {
    expect(exportTargets(manifest.exports)).toEqual(['./dist/index.d.ts', './dist/index.js', './package.json']);
  });

  it('names specs, tsconfigs, build info and tool configs that slipped in', () => {
    const bad = [...good, 'src/plugin.spec.ts', 'dist/plugin.spec.d.ts', 'tsconfig.lib.json', 'dist/tsconfig.lib.tsbuildinfo', 'jest.config.cjs'];
    expect(tarballProblems(bad, manifest)).toEqual([
      'test file packed: src/plugin.spec.ts',
      'test file packed: dist/plugin.spec.d.ts',
      'tsconfig packed: tsconfig.lib.json',
      'build info packed: dist/tsconfig.lib.tsbuildinfo',
      'tool config packed: jest.config.cjs',
    ]);
  });

  it('reports a missing README and an export that points outside the tarball', () => {
    const files = good.filter((f) => f !== 'README.md' && f !== 'dist/index.d.ts');
    expect(tarballProblems(files, manifest)).toEqual([
      'README.md is missing',
      '@kube-proxy/backend-x points at ./dist/index.d.ts, which is not in the tarball',
      '@kube-proxy/backend-x points at ./dist/index.d.ts, which is not in the tarball',
    ]);
  });

  it('reports a tarball without built output', () => {
    expect(tarballProblems(['package.json', 'README.md', 'src/index.ts'], { name: 'p' })).toEqual(['no dist/**/*.js', 'no dist/**/*.d.ts']);
  });
});
