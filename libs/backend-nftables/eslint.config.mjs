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
    // A backend sees core only through its public index, and never another backend.
    files: ['**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/core/*', '**/core/src/**', '@kube-proxy/backend-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
];
