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
    // A backend sees core, netfilter-iptables and userspace-proxy only through their entry points, and never another backend.
    files: ['**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/core/*', '@kube-proxy/netfilter-iptables/*', '@kube-proxy/userspace-proxy/*', '!@kube-proxy/core/testing', '!@kube-proxy/netfilter-iptables/testing', '!@kube-proxy/userspace-proxy/testing', '**/core/src/**', '**/netfilter-iptables/src/**', '**/userspace-proxy/src/**', '@kube-proxy/backend-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
  {
    // Test helpers (`*/testing` entry points) are for specs and test fixtures only, never shipped code.
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kube-proxy/core/*', '@kube-proxy/netfilter-iptables/*', '@kube-proxy/userspace-proxy/*', '**/core/src/**', '**/netfilter-iptables/src/**', '**/userspace-proxy/src/**', '@kube-proxy/backend-*', '@kube-proxy/proxy', '@kube-proxy/tools*'] }],
    },
  },
];
