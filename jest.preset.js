// Shared Jest settings: ESM mode, swc transform with legacy decorators + metadata (tsyringe),
// and the source export condition so tests run against src/ without a build.
const nxPreset = require('@nx/jest/preset').default;

module.exports = {
  ...nxPreset,
  testEnvironment: 'node',
  setupFiles: ['reflect-metadata'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.(ts|js|mjs)$': [
      '@swc/jest',
      {
        swcrc: false,
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/'],
  testEnvironmentOptions: { customExportConditions: ['@kube-proxy/source', 'node', 'node-addons'] },
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
