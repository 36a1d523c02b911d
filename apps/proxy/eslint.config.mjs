import baseConfig from '../../eslint.config.mjs';

export default [
  ...baseConfig,
  {
    files: ['**/*.json'],
    rules: {
      '@nx/dependency-checks': ['error', { ignoredFiles: ['{projectRoot}/eslint.config.{js,cjs,mjs}', '{projectRoot}/**/*.spec.ts', '{projectRoot}/e2e/**'] }],
    },
    languageOptions: { parser: await import('jsonc-eslint-parser') },
  },
  {
    // The app's tests may drive it with the test harnesses in tools (test API server, netns harness);
    // its shipped code may not.
    files: ['src/**/*.spec.ts', 'e2e/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: [],
          depConstraints: [{ sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:netfilter', 'type:backend', 'type:tools'] }],
        },
      ],
    },
  },
];
