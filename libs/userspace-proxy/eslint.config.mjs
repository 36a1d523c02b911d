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
    // The proxy engine sits on core only (through its entry points), below the backends that run it.
    files: ['**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/core/*', '!@kube-proxy/core/testing', '**/core/src/**', '@kube-proxy/backend-*', '@kube-proxy/netfilter-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
  {
    // Test helpers (`*/testing` entry points) are for specs and test fixtures only, never shipped code.
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/core/*', '**/core/src/**', '@kube-proxy/backend-*', '@kube-proxy/netfilter-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
];
