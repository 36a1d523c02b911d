import nx from '@nx/eslint-plugin';

// Module boundaries are the architecture: core depends on no workspace library; a backend depends on
// core only (through its public index); the app is the only composition root; tools may use anything
// but nothing ships depending on tools.
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
            { sourceTag: 'type:backend', onlyDependOnLibsWithTags: ['type:core'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:backend'] },
            { sourceTag: 'type:tools', onlyDependOnLibsWithTags: ['type:core', 'type:backend'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The app's tests may drive it with the test harnesses in tools (test API server, netns harness);
    // its shipped code may not.
    files: ['apps/proxy/src/**/*.spec.ts', 'apps/proxy/e2e/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: [],
          depConstraints: [{ sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:backend', 'type:tools'] }],
        },
      ],
    },
  },
  {
    // Tests index into fixtures they just built; a non-null assertion there is a claim the test checks.
    files: ['**/*.spec.ts', '**/testing/**/*.ts', '**/e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Backends may import only core's public entry point, never its files.
    files: ['libs/backend-*/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/core/*', '**/core/src/**', '@kube-proxy/backend-*'] }],
    },
  },
  {
    files: ['libs/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/backend-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
];
