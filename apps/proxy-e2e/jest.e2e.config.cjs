// Real-kernel e2e tests (network namespaces, iptables, conntrack). Needs root; see README.md.
// Run: npx nx run proxy-e2e:e2e   (or, in apps/proxy-e2e:
//   node --experimental-vm-modules --no-warnings=ExperimentalWarning ../../node_modules/jest/bin/jest.js -c jest.e2e.config.cjs --runInBand)
module.exports = {
  displayName: 'proxy-e2e',
  preset: '../../jest.preset.js',
  testMatch: ['<rootDir>/src/**/*.e2e.spec.ts'],
  // Each check is bounded far below this; it only guards against a hung setup.
  testTimeout: 120_000,
  // The suites build namespaces and run a proxy each: one at a time.
  maxWorkers: 1,
};
