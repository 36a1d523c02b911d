/**
 * A dual-stack --dry-run (issue 20, defect 4): both families' proxiers share one in-memory kernel, as
 * both share one network namespace on a node, and both find kube-ipvs0 missing on their first sync.
 * The second `link add` must not fail that family's sync (which would be retried a sync period later,
 * so `--once` would wait 30 s); each family's block is printed from the first sync.
 */
import { CLOCK, COMMAND_EXECUTOR, LOGGER, PROVIDER, SYSCTL, type DualStackProvider, type V1EndpointSlice, type V1Node, type V1Service } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, fakeContainer, settle, testContext } from '@kube-proxy/core/testing';
import { ipvsBackend } from './plugin.js';
import type { IpvsProxier } from './proxier/ipvs-proxier.js';

const DUAL: V1Service = {
  metadata: { namespace: 'ns1', name: 'web' },
  spec: {
    type: 'NodePort',
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10', 'fd00:96::10'],
    ipFamilies: ['IPv4', 'IPv6'],
    ipFamilyPolicy: 'RequireDualStack',
    ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 as never, nodePort: 30080 }],
  },
} as V1Service;

function slice(family: 'IPv4' | 'IPv6', ip: string): V1EndpointSlice {
  return {
    metadata: { namespace: 'ns1', name: `web-${family}`, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: family,
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip], nodeName: 'node-2', conditions: { ready: true } }],
  } as V1EndpointSlice;
}

const NODE: V1Node = {
  metadata: { name: 'node-1' },
  status: {
    addresses: [
      { type: 'InternalIP', address: '192.168.50.1' },
      { type: 'InternalIP', address: '192.168.50.2' },
      { type: 'InternalIP', address: 'fd00:50::1' },
      { type: 'InternalIP', address: 'fd00:50::2' },
    ],
  },
} as V1Node;

describe('IPVS dual-stack --dry-run', () => {
  it('both families complete their first sync on one shared kube-ipvs0 and print their blocks', async () => {
    const logger = new RecordingLogger();
    const { container } = fakeContainer([
      [LOGGER, logger],
      [CLOCK, new FakeClock(1_700_000_000_000)],
      [COMMAND_EXECUTOR, new FakeCommandExecutor()],
      [SYSCTL, new FakeSysctl()],
    ]);
    const context = testContext({ dryRun: true, families: ['IPv4', 'IPv6'], nodeIPs: { IPv4: '192.168.50.1', IPv6: 'fd00:50::1' } });
    ipvsBackend.register(container, context);
    const provider = container.resolve<DualStackProvider>(PROVIDER);
    provider.onNodeAdd(NODE);
    provider.onServiceAdd(DUAL);
    provider.onEndpointSliceAdd(slice('IPv4', '10.244.1.5'));
    provider.onEndpointSliceAdd(slice('IPv6', 'fd00:244::5'));
    provider.onServicesSynced();
    provider.onEndpointSlicesSynced();
    void provider.syncLoop();
    await settle();

    const [v4, v6] = provider.providers as unknown as [IpvsProxier, IpvsProxier];
    expect([v4.stats.syncs, v4.stats.failedSyncs, v6.stats.syncs, v6.stats.failedSyncs]).toEqual([1, 0, 1, 0]);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
    const out = context.dryRunSink.text;
    expect(out).toMatch(/^# sync 1 full \S+ IPv4$/m);
    expect(out).toMatch(/^# sync 1 full \S+ IPv6$/m);
    // Each family's VIP bound on the one link, and its node ports on every node address of the family.
    expect(out).toContain('10.96.0.10/32\n');
    expect(out).toContain('fd00:96::10/128\n');
    for (const vs of ['192.168.50.1:30080', '192.168.50.2:30080', '[fd00:50::1]:30080', '[fd00:50::2]:30080']) {
      expect(out).toContain(`-A -t ${vs} -s rr\n`);
    }
    provider.stop();
  });
});
