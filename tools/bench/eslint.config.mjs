import baseConfig, { moduleBoundaries } from '../../eslint.config.mjs';

export default [
  ...baseConfig,
  {
    files: ['**/*.json'],
    rules: {
      '@nx/dependency-checks': ['error', { ignoredFiles: ['{projectRoot}/eslint.config.{js,cjs,mjs}', '{projectRoot}/**/*.spec.ts'] }],
    },
    languageOptions: { parser: await import('jsonc-eslint-parser') },
  },
  {
    // Benchmarks measure the app itself: they may import its package entry points (Nx forbids
    // importing an application by default; nothing else may).
    files: ['**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': moduleBoundaries(false, ['@kube-proxy/proxy', '@kube-proxy/proxy/*']) },
  },
];
