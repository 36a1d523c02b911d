/* Test fixtures mirroring upstream's NewFakeProxier conventions (not part of the package API):
 * Pod IPs 10.0.0.0/8, ClusterIPs 172.30.0.0/16, node IPs 192.168.0.0/24 (this node 192.168.0.2),
 * external IPs 192.168.99.0/24, LB IPs 1.2.3.4 / 5.6.7.8 / 9.10.11.12, outside clients 203.0.113.0/24. */
import type { IPFamily, ProxierObservers, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, RecordingLogger, testContext } from '@kube-proxy/core/testing';
import { MemoryNft } from '../kernel/memory-nft.js';
import { familyOf } from '../nft/nft-objects.js';
import { NftablesProxier } from '../proxier/nftables-proxier.js';

export const TEST_NODE_NAME = 'test-node';
export const TEST_NODE_IP = '192.168.0.2';
export const TEST_NODE_IP_ALT = '192.168.1.2';
export const TEST_EXTERNAL_IP = '192.168.99.11';
export const TEST_NODE_IPV6 = '2001:db8::1';
export const TEST_NODE_IPV6_ALT = '2001:db8:1::2';
export const TEST_EXTERNAL_CLIENT = '203.0.113.2';
export const TEST_EXTERNAL_CLIENT_BLOCKED = '203.0.113.130';
/** The addresses the packet tracer treats as this node's (upstream's testNodeIPs). */
export const TEST_NODE_IPS: readonly string[] = [TEST_NODE_IP, TEST_NODE_IP_ALT, TEST_EXTERNAL_IP, TEST_NODE_IPV6, TEST_NODE_IPV6_ALT];

export interface FakeProxier {
  readonly nft: MemoryNft;
  readonly proxier: NftablesProxier;
  readonly clock: FakeClock;
  readonly logger: RecordingLogger;
  readonly exec: FakeCommandExecutor;
}

/** An IPv4 (or IPv6) proxier over an in-memory table, initialized (services and slices synced). */
export function newFakeProxier(family: IPFamily = 'IPv4', options: { masqueradeAll?: boolean; serviceCIDRs?: readonly string[]; nodePortAddresses?: readonly string[]; noLocalDetector?: boolean; observers?: ProxierObservers } = {}): FakeProxier {
  const v6 = family === 'IPv6';
  const ctx = testContext({
    nodeName: TEST_NODE_NAME,
    nodeIPs: { IPv4: TEST_NODE_IP, IPv6: TEST_NODE_IPV6 },
    families: [family],
    dryRun: false,
    config: {
      // No cluster CIDR means no local-traffic detector (upstream's NewNoOpLocalDetector).
      clusterCIDR: options.noLocalDetector ? '' : v6 ? 'fd00:10::/64' : '10.0.0.0/8',
      nodePortAddresses: [...(options.nodePortAddresses ?? [`${TEST_NODE_IP}/32`, `${TEST_NODE_IPV6}/128`])],
      ...(options.masqueradeAll ? { nftables: { ...testContext().config.nftables, masqueradeAll: true } } : {}),
    },
  });
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: '0 flow entries have been deleted.\n' });
  const nft = new MemoryNft(familyOf(family), { keepTransactions: true });
  const proxier = new NftablesProxier({
    family,
    context: ctx,
    nft,
    executor: exec,
    clock,
    logger,
    masqueradeMark: '0x4000',
    ...(options.observers ? { observers: options.observers } : {}),
    networkInterfaces: () => ({
      lo: [
        { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '', internal: true, cidr: '127.0.0.1/8' },
        { address: '::1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', family: 'IPv6', mac: '', internal: true, cidr: '::1/128', scopeid: 0 },
      ],
      eth0: [TEST_NODE_IP, TEST_NODE_IP_ALT, TEST_EXTERNAL_IP].map((address) => ({ address, netmask: '255.255.255.0', family: 'IPv4' as const, mac: '', internal: false, cidr: `${address}/24` }))
        .concat([TEST_NODE_IPV6, TEST_NODE_IPV6_ALT].map((address) => ({ address, netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6' as const, mac: '', internal: false, cidr: `${address}/64`, scopeid: 0 }) as never)),
    }),
  });
  proxier.onServiceCIDRsChanged(options.serviceCIDRs ?? [v6 ? 'fd00:10:96::/112' : '172.30.0.0/16']);
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  return { nft, proxier, clock, logger, exec };
}

/** A Service as upstream's makeTestService builds it, edited by `edit`. */
export function makeTestService(namespace: string, name: string, edit: (svc: V1Service & { spec: NonNullable<V1Service['spec']>; status: NonNullable<V1Service['status']> }) => void): V1Service {
  const svc = { metadata: { name, namespace, annotations: {} }, spec: { type: 'ClusterIP', ports: [] }, status: { loadBalancer: {} } } as unknown as V1Service & {
    spec: NonNullable<V1Service['spec']>;
    status: NonNullable<V1Service['status']>;
  };
  edit(svc);
  if (svc.spec.clusterIP && !svc.spec.clusterIPs) svc.spec.clusterIPs = [svc.spec.clusterIP];
  return svc;
}

/** An EndpointSlice as upstream's makeTestEndpointSlice builds it (`name-N`, service-name label). */
export function makeTestEndpointSlice(namespace: string, name: string, sliceNum: number, edit: (eps: V1EndpointSlice) => void): V1EndpointSlice {
  const eps: V1EndpointSlice = {
    metadata: { name: `${name}-${sliceNum}`, namespace, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    endpoints: [],
  };
  edit(eps);
  return eps;
}

/** The dump after normalisation: blank lines and `#` comments dropped, lines sorted (upstream compares sorted dumps). */
export function normalizedLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .sort();
}
