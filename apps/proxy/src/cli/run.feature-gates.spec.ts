import { rm } from 'node:fs/promises';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';
import { manifestsDir, webManifests } from './testing/web-manifests.js';

// --feature-gates=PreferSameTrafficDistribution=false through the whole CLI (--dry-run --once): a
// Service whose EndpointSlice carries node hints (trafficDistribution: PreferSameNode) and zone hints.
// Gate on: only the endpoint hinted for this node. The gate is GA and locked since v1.35, so turning
// it off is refused, as upstream v1.37 refuses it (core's topology still honours an explicit false for
// library callers; see categorize-endpoints.spec).

const MANIFESTS = webManifests({
  nodeMetadata: '  labels: { topology.kubernetes.io/zone: zone-a }\n',
  serviceSpec: '  trafficDistribution: PreferSameNode\n',
  endpoints: `  - addresses: [10.244.1.11]
    nodeName: node-1
    zone: zone-a
    conditions: { ready: true }
    hints: { forZones: [{ name: zone-a }], forNodes: [{ name: node-1 }] }
  - addresses: [10.244.2.12]
    nodeName: node-2
    zone: zone-a
    conditions: { ready: true }
    hints: { forZones: [{ name: zone-a }], forNodes: [{ name: node-2 }] }
  - addresses: [10.244.3.13]
    nodeName: node-3
    zone: zone-b
    conditions: { ready: true }
    hints: { forZones: [{ name: zone-b }], forNodes: [{ name: node-3 }] }
`,
});

/** The endpoints whose DNAT rules the dry-run ruleset contains. */
async function dnatTargets(dir: string, extra: readonly string[]): Promise<string[]> {
  const io = captureIO();
  const code = await runCli(
    ['--proxy-mode=iptables', `--manifests=${dir}`, '--hostname-override=node-1', '--dry-run', '--once', ...extra],
    io.streams,
  );
  expect(code).toBe(0);
  return [...io.out().matchAll(/-j DNAT --to-destination (\S+)/g)].map((m) => m[1]!).sort();
}

describe('kube-proxy CLI --feature-gates=PreferSameTrafficDistribution', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await manifestsDir('kp-cli-gates-', MANIFESTS);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('on (the default): node hints pick the endpoint hinted for this node', async () => {
    expect(await dnatTargets(dir, [])).toEqual(['10.244.1.11:8080']);
  });

  it('=false is refused: the gate is locked to true (exit 1)', async () => {
    const io = captureIO();
    const code = await runCli(
      ['--proxy-mode=iptables', `--manifests=${dir}`, '--dry-run', '--once', '--feature-gates=PreferSameTrafficDistribution=false'],
      io.streams,
    );
    expect(code).toBe(1);
    expect(io.err()).toContain('featureGates: cannot set feature gate PreferSameTrafficDistribution to false, feature is locked to true');
  });
});
