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
    // Core is the bottom of the graph: it knows no backend, no app and no tool.
    files: ['**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/backend-*', '@kube-proxy/netfilter-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
  {
    // Core's test helpers (src/testing, the `@kube-proxy/core/testing` entry point) are not part of its production code.
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', 'src/testing/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/backend-*', '@kube-proxy/proxy', '@kube-proxy/tools*', '**/testing/**', '@kube-proxy/netfilter-*'] }],
    },
  },
];
