import nx from '@nx/eslint-plugin';

// Module boundaries are the architecture, one tag per kind of project:
// - type:core depends on no workspace library; type:netfilter (the iptables/nftables plumbing) and
//   type:engine (the userspace proxy engine) on core; a type:backend on core, netfilter and engine
//   (through their public entries); type:app, the only composition root, on those four.
// - type:testing (test API server, netns harness, IPVS VM, fuzz generators) may use the production
//   libraries and each other, but production code may not use them: only specs (below) and the e2e
//   suites do.
// - type:bench runs anything but the e2e suites; type:e2e anything; type:tools (generators, release
//   checks, image checks) the libraries and test libraries, never the app.
const PRODUCTION = {
  'type:core': [],
  'type:netfilter': ['type:core'],
  'type:engine': ['type:core'],
  'type:backend': ['type:core', 'type:netfilter', 'type:engine'],
  'type:app': ['type:core', 'type:netfilter', 'type:engine', 'type:backend'],
};
const depConstraints = (specs) => [
  // A spec may also use the test libraries, except core's: they are built on core (a cycle).
  ...Object.entries(PRODUCTION).map(([sourceTag, tags]) => ({
    sourceTag,
    onlyDependOnLibsWithTags: specs && sourceTag !== 'type:core' ? [...tags, 'type:testing'] : tags,
  })),
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:core', 'type:netfilter', 'type:engine', 'type:backend', 'type:testing'] },
  { sourceTag: 'type:bench', notDependOnLibsWithTags: ['type:e2e'] },
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'type:tools', onlyDependOnLibsWithTags: ['type:core', 'type:netfilter', 'type:engine', 'type:backend', 'type:testing'] },
];
/** The rule's options; `allow` names import paths a project's own config exempts (see tools/bench). */
export const moduleBoundaries = (specs, allow = []) => [
  'error',
  { enforceBuildableLibDependency: true, banTransitiveDependencies: true, allow, depConstraints: depConstraints(specs) },
];

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...nx.configs['flat/javascript'],
  { ignores: ['**/dist', '**/out-tsc', '**/node_modules', '**/*.cjs', 'bin/**'] },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': moduleBoundaries(false),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A function a reader can hold on one screen: past ~80 lines a function is several steps that want
    // names. Tests, test rigs and the e2e suites are exempt (a scenario reads best top to bottom); the
    // benchmarks are not (they are shipped tooling whose timing loops must stay readable too).
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**', '**/e2e/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // Tests index into fixtures they just built; a non-null assertion there is a claim the test checks.
    files: ['**/*.spec.ts', '**/testing/**/*.ts', '**/e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Specs are not shipped: they may drive the code under test with the test libraries.
    files: ['**/*.spec.ts'],
    rules: { '@nx/enforce-module-boundaries': moduleBoundaries(true) },
  },
];
