import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger } from '@kube-proxy/core/testing';
import { servicePortEndpointChainName, servicePortPolicyClusterChain } from '../render/index.js';
import { IptablesProxier } from './iptables-proxier.js';
import type { V1EndpointSlice } from './k8s-types.js';
import type { PortSpec } from './testing/proxier-fixtures.js';
import { context, node, NODE, service, settle, TestIptables } from './testing/proxier-fixtures.js';

// --feature-gates=PreferSameTrafficDistribution reaches core's topology through the iptables proxier:
// with the gate off, node hints are ignored and zone hints decide (upstream's topologyModeFromHints).

const HTTP: PortSpec[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }];
const ZONE_LABEL = 'topology.kubernetes.io/zone';
const SVC_CHAIN = servicePortPolicyClusterChain('ns1/web:http', 'TCP');
const sep = (ip: string): string => servicePortEndpointChainName('ns1/web:http', 'TCP', `${ip}:8080`);

/** Three endpoints: .11 hinted for this node (zone-a), .12 for node-2 (zone-a), .13 for node-3 (zone-b). */
function hintedSlice(): V1EndpointSlice {
  const ep = (ip: string, forNode: string, zone: string) => ({
    addresses: [ip],
    nodeName: forNode,
    zone,
    conditions: { ready: true },
    hints: { forZones: [{ name: zone }], forNodes: [{ name: forNode }] },
  });
  return {
    metadata: { namespace: 'ns1', name: 'web-1', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [ep('10.244.1.11', NODE, 'zone-a'), ep('10.244.1.12', 'node-2', 'zone-a'), ep('10.244.1.13', 'node-3', 'zone-b')],
  } as V1EndpointSlice;
}

/** The KUBE-SEP chains the service's cluster chain jumps to after one full sync with `featureGates`. */
async function endpointChainsUsed(featureGates: Record<string, boolean>): Promise<string[]> {
  const ipt = new TestIptables('IPv4');
  const proxier = new IptablesProxier({
    family: 'IPv4',
    context: context({ config: { featureGates } }),
    iptables: ipt,
    executor: new FakeCommandExecutor().setDefault({ exitCode: 0 }),
    sysctl: new FakeSysctl({ 'net/ipv4/conf/all/route_localnet': '0', 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' }),
    clock: new FakeClock(),
    logger: new RecordingLogger(),
    dryRunTables: ipt.tables,
    networkInterfaces: () => ({}),
  });
  const loop = proxier.syncLoop();
  proxier.onNodeAdd(node({ [ZONE_LABEL]: 'zone-a' }));
  proxier.onServiceAdd(service('ns1', 'web', '10.96.0.10', HTTP));
  proxier.onEndpointSliceAdd(hintedSlice());
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  await settle();
  const rules = ipt.tables.rules('nat', SVC_CHAIN) ?? [];
  proxier.stop();
  await loop;
  return ['10.244.1.11', '10.244.1.12', '10.244.1.13'].filter((ip) => rules.some((r) => r.endsWith(`-j ${sep(ip)}`)));
}

describe('IptablesProxier and the PreferSameTrafficDistribution feature gate', () => {
  it('uses the endpoint hinted for this node while the gate is on (its default)', async () => {
    expect(await endpointChainsUsed({})).toEqual(['10.244.1.11']);
    expect(await endpointChainsUsed({ PreferSameTrafficDistribution: true })).toEqual(['10.244.1.11']);
  });

  it('ignores node hints and uses the zone hints when the gate is off', async () => {
    expect(await endpointChainsUsed({ PreferSameTrafficDistribution: false })).toEqual(['10.244.1.11', '10.244.1.12']);
  });

  it('AllBeta=false leaves it on: the gate is GA since v1.35, and AllBeta only reaches beta gates', async () => {
    expect(await endpointChainsUsed({ AllBeta: false })).toEqual(['10.244.1.11']);
  });
});
