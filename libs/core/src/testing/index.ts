/**
 * Test helpers of @kube-proxy/core (`@kube-proxy/core/testing`): fakes of the host ports, a fake
 * clock, a plugin container and proxy context for tests, the hostile-name vectors of the renderers'
 * hostile-input tests. Specs, e2e suites and benchmarks import them from here; production code never does.
 */
export { FakeClock } from './fake-clock.js';
export { advanceSettling, settle } from './settle.js';
export {
  commandNotFound,
  FakeCommandExecutor,
  FakeHostFs,
  FakeSysctl,
  RecordingLogger,
  type CommandMatcher,
  type FakeCommandResponse,
  type LogEntry,
  type RecordedCommand,
} from './host-fakes.js';
export { fakeContainer, type PluginContainer } from './fake-container.js';
export { StringSink, TEST_HOST, testContext, type TestContextOverrides } from './test-context.js';
export { testServicePort } from './test-service-port.js';
export { BENIGN_NAME, HOSTILE_NAMES, type HostileName } from './hostile-names.js';
export { defineUpstreamModeMetrics } from './upstream-mode-metrics.js';
export {
  explainTestConfig,
  explainTestNode,
  explainTestService,
  explainTestSlice,
  type TestSliceEndpoint,
} from './explain-objects.js';
