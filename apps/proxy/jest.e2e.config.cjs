// Real-kernel e2e tests (network namespaces, iptables, conntrack). Needs root; see e2e/README.md.
// Run: npx nx run proxy:e2e   (or, in apps/proxy:
//   node --experimental-vm-modules --no-warnings=ExperimentalWarning ../../node_modules/jest/bin/jest.js -c jest.e2e.config.cjs --runInBand)
module.exports = {
  displayName: 'proxy-e2e',
  preset: '../../jest.preset.js',
  testMatch: ['<rootDir>/e2e/**/*.e2e.spec.ts'],
  testTimeout: 120_000,
  maxWorkers: 1,
  // The suites share nothing, but each one builds namespaces and starts processes: keep them serial
  // and let Jest report open handles instead of hanging on them.
  forceExit: false,
  detectOpenHandles: false,
};
