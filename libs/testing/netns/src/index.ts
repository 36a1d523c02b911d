// Real-kernel test harness: simulated Kubernetes node in network namespaces (docs/datapath-testing.md),
// echo servers and bounded probes, iptables helpers. Everything stays inside namespaces it creates.
export { run, waitFor, sleep, idle, mergeEnv, CommandError, type CommandResult, type RunOptions } from './exec.js';
export {
  createSimulatedNode,
  cleanupPrefix,
  cleanupStaleRuns,
  runPrefix,
  listNamespaces,
  namespaceNames,
  NODE_IP,
  CLIENT_IP,
  BRIDGE_IP,
  POD_CIDR,
  CLUSTER_CIDR,
  SERVICE_CIDR,
  EXTERNAL_CIDR,
  type SimulatedNode,
  type SimulatedNodeOptions,
  type PodInfo,
  type SpawnOptions,
} from './topology.js';
export {
  startEchoServer,
  startServerScript,
  probe,
  describeProbe,
  type EchoServer,
  type EchoServerOptions,
  type ProbeOptions,
  type ProbeResult,
  type ProbeTry,
} from './traffic.js';
export { scriptPath, type HarnessScript } from './scripts.js';
export {
  IPTABLES_VARIANTS,
  iptablesCommand,
  iptables,
  iptablesSave,
  iptablesRestore,
  chainsInDump,
  kubeChains,
  conntrack,
  type IptablesVariant,
} from './iptables.js';
export { netnsAvailable, onPath, type NetnsAvailability } from './preflight.js';
