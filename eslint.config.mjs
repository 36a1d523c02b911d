import nx from '@nx/eslint-plugin';

// Module boundaries are the architecture: core depends on no workspace library; netfilter-iptables
// (the host's iptables) on core only; a backend on core and netfilter-iptables (through their entry
// points); the app is the only composition root; tools may use anything but nothing ships depending
// on tools.
export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...nx.configs['flat/javascript'],
  { ignores: ['**/dist', '**/out-tsc', '**/node_modules', '**/*.cjs', 'bin/**'] },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          banTransitiveDependencies: true,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:core', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:netfilter', onlyDependOnLibsWithTags: ['type:core'] },
            { sourceTag: 'type:backend', onlyDependOnLibsWithTags: ['type:core', 'type:netfilter'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:netfilter', 'type:backend'] },
            { sourceTag: 'type:tools', onlyDependOnLibsWithTags: ['type:core', 'type:netfilter', 'type:backend'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A function a reader can hold on one screen: past ~80 lines a function is several steps that want
    // names. Tests, test rigs and the e2e suites are exempt (a scenario reads best top to bottom); the
    // benchmarks are not (they are shipped tooling whose timing loops must stay readable too).
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**', '**/e2e/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // Tests index into fixtures they just built; a non-null assertion there is a claim the test checks.
    files: ['**/*.spec.ts', '**/testing/**/*.ts', '**/e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
];
