// Traffic-policy, terminating-endpoint and masquerade packet flows, ported from upstream's
// pkg/proxy/nftables/proxier_test.go.
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import type { MemoryNft } from '../kernel/memory-nft.js';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, TEST_EXTERNAL_CLIENT, TEST_NODE_IP, TEST_NODE_IPS, TEST_NODE_NAME } from '../testing/fake-proxier.js';
import { runPacketFlows, type PacketFlowCase } from '../testing/packet-flow.js';

function expectFlows(nft: MemoryNft, cases: readonly PacketFlowCase[]): void {
  const { got, want } = runPacketFlows(nft.table, TEST_NODE_IPS, cases);
  expect(got).toEqual(want);
}

interface Ep {
  ip: string;
  node: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

/** Upstream's unnamed-port slice of these tests (`svc1-1`, port "" 80/TCP). */
function unnamedSlice(endpoints: Ep[]): V1EndpointSlice {
  return makeTestEndpointSlice('ns1', 'svc1', 1, (eps) => {
    eps.addressType = 'IPv4';
    eps.ports = [{ name: '', port: 80, protocol: 'TCP' }];
    eps.endpoints = endpoints.map((e) => ({
      addresses: [e.ip],
      nodeName: e.node,
      conditions: { ready: e.ready ?? true, ...(e.serving === undefined ? {} : { serving: e.serving }), ...(e.terminating === undefined ? {} : { terminating: e.terminating }) },
    }));
  });
}

const podToCluster = (output: string, name = 'pod to clusterIP'): PacketFlowCase => ({ name, sourceIP: '10.0.0.2', destIP: '172.30.1.1', destPort: 80, output });
const externalToLB = (output: string, masq = false, name = 'external to LB'): PacketFlowCase => ({ name, sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output, masq });

describe('nftables traffic policies', () => {
  // Ports upstream's TestInternalTrafficPolicy (each case, then the slice deleted).
  describe.each([
    { name: 'internalTrafficPolicy is cluster', itp: 'Cluster', nodes: [TEST_NODE_NAME, 'node1', 'node2'], output: '10.0.1.1:80, 10.0.1.2:80, 10.0.1.3:80' },
    { name: 'internalTrafficPolicy is local and there is one local endpoint', itp: 'Local', nodes: [TEST_NODE_NAME, 'node1', 'node2'], output: '10.0.1.1:80' },
    { name: 'internalTrafficPolicy is local and there are multiple local endpoints', itp: 'Local', nodes: [TEST_NODE_NAME, TEST_NODE_NAME, 'node2'], output: '10.0.1.1:80, 10.0.1.2:80' },
    { name: 'internalTrafficPolicy is local and there are no local endpoints', itp: 'Local', nodes: ['node0', 'node1', 'node2'], output: 'DROP' },
  ])('$name', ({ itp, nodes, output }) => {
    it('sends pod traffic to the policy\'s endpoints, and rejects it once the endpoints are gone', async () => {
      const { proxier, nft } = newFakeProxier();
      proxier.onServiceAdd(makeTestService('ns1', 'svc1', (s) => Object.assign(s.spec, { clusterIP: '172.30.1.1', selector: { foo: 'bar' }, internalTrafficPolicy: itp, ports: [{ name: '', port: 80, protocol: 'TCP' }] })));
      const eps = unnamedSlice(nodes.map((node, i) => ({ ip: `10.0.1.${i + 1}`, node })));
      proxier.onEndpointSliceAdd(eps);
      await proxier.syncProxyRules();
      expectFlows(nft, [podToCluster(output)]);
      proxier.onEndpointSliceDelete(eps);
      await proxier.syncProxyRules();
      expectFlows(nft, [podToCluster('REJECT', 'endpoints deleted')]);
    });
  });

  const lb = (etp: 'Local' | 'Cluster'): V1Service =>
    makeTestService('ns1', 'svc1', (s) => {
      Object.assign(s.spec, { clusterIP: '172.30.1.1', type: 'LoadBalancer', externalTrafficPolicy: etp, ports: [{ name: '', targetPort: 80, port: 80, protocol: 'TCP' }], healthCheckNodePort: 30000 });
      s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
    });
  const ready = (ip: string, node: string): Ep => ({ ip, node, ready: true, serving: true, terminating: false });
  const servingTerminating = (ip: string, node: string): Ep => ({ ip, node, ready: false, serving: true, terminating: true });
  const gone = (ip: string, node: string): Ep => ({ ip, node, ready: false, serving: false, terminating: true });

  async function runTerminatingCase(etp: 'Local' | 'Cluster', endpoints: Ep[], flows: PacketFlowCase[]): Promise<void> {
    const { proxier, nft } = newFakeProxier();
    proxier.onServiceAdd(lb(etp));
    const eps = unnamedSlice(endpoints);
    proxier.onEndpointSliceAdd(eps);
    await proxier.syncProxyRules();
    expectFlows(nft, flows);
    proxier.onEndpointSliceDelete(eps);
    await proxier.syncProxyRules();
    expectFlows(nft, [podToCluster('REJECT', 'pod to clusterIP after endpoints deleted'), externalToLB('REJECT', false, 'external to LB after endpoints deleted')]);
  }

  // Ports upstream's TestTerminatingEndpointsTrafficPolicyLocal.
  describe('terminating endpoints, externalTrafficPolicy Local', () => {
    it('uses only ready endpoints while there are any', () =>
      runTerminatingCase('Local', [ready('10.0.1.1', TEST_NODE_NAME), ready('10.0.1.2', TEST_NODE_NAME), servingTerminating('10.0.1.3', TEST_NODE_NAME), gone('10.0.1.4', TEST_NODE_NAME), ready('10.0.1.5', 'node-1')], [
        podToCluster('10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80'),
        externalToLB('10.0.1.1:80, 10.0.1.2:80'),
      ]));
    it('falls back to serving terminating local endpoints for external traffic', () =>
      runTerminatingCase('Local', [servingTerminating('10.0.1.2', TEST_NODE_NAME), servingTerminating('10.0.1.3', TEST_NODE_NAME), gone('10.0.1.4', TEST_NODE_NAME), ready('10.0.1.5', 'node-1')], [
        podToCluster('10.0.1.5:80'),
        externalToLB('10.0.1.2:80, 10.0.1.3:80'),
      ]));
    it('drops external traffic when the only serving endpoints are remote and terminating', () =>
      runTerminatingCase('Local', [servingTerminating('10.0.1.5', 'node-1')], [podToCluster('10.0.1.5:80'), externalToLB('DROP', false, 'external to LB, no locally-usable endpoints')]));
    it('rejects everything when no endpoint is usable on any node', () =>
      runTerminatingCase('Local', [gone('10.0.1.5', TEST_NODE_NAME), gone('10.0.1.5', 'node-1')], [
        podToCluster('REJECT', 'pod to clusterIP, no usable endpoints'),
        externalToLB('REJECT', false, 'external to LB, no usable endpoints'),
      ]));
  });

  // Ports upstream's TestTerminatingEndpointsTrafficPolicyCluster.
  describe('terminating endpoints, externalTrafficPolicy Cluster', () => {
    it('uses only ready endpoints while there are any', () =>
      runTerminatingCase('Cluster', [ready('10.0.1.1', TEST_NODE_NAME), ready('10.0.1.2', TEST_NODE_NAME), servingTerminating('10.0.1.3', 'another-node'), gone('10.0.1.4', 'another-node'), ready('10.0.1.5', 'another-node')], [
        podToCluster('10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80'),
        externalToLB('10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80', true),
      ]));
    it('falls back to every serving terminating endpoint', () =>
      runTerminatingCase('Cluster', [servingTerminating('10.0.1.2', TEST_NODE_NAME), servingTerminating('10.0.1.3', TEST_NODE_NAME), gone('10.0.1.4', 'another-node'), servingTerminating('10.0.1.5', 'another-node')], [
        podToCluster('10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80'),
        externalToLB('10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80', true),
      ]));
    it('uses a remote serving terminating endpoint for all traffic', () =>
      runTerminatingCase('Cluster', [servingTerminating('10.0.1.5', 'node-1')], [podToCluster('10.0.1.5:80'), externalToLB('10.0.1.5:80', true)]));
    it('rejects everything when no endpoint is usable on any node', () =>
      runTerminatingCase('Cluster', [gone('10.0.1.5', TEST_NODE_NAME), gone('10.0.1.5', 'node-1')], [podToCluster('REJECT'), externalToLB('REJECT')]));
  });

  // Ports upstream's TestInternalExternalMasquerade: one set of flows, four configurations.
  describe('internal and external masquerading', () => {
    const base: PacketFlowCase[] = [
      { name: 'pod to ClusterIP', sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80' },
      { name: 'pod to NodePort', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'pod to LB', sourceIP: '10.0.0.2', destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'node to ClusterIP', sourceIP: TEST_NODE_IP, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'node to NodePort', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'node to LB', sourceIP: TEST_NODE_IP, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'external to ClusterIP', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'external to NodePort', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'external to LB', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'pod to ClusterIP with eTP:Local', sourceIP: '10.0.0.2', destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80' },
      { name: 'pod to NodePort with eTP:Local', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3002, output: '10.180.0.2:80, 10.180.1.2:80' },
      { name: 'pod to LB with eTP:Local', sourceIP: '10.0.0.2', destIP: '5.6.7.8', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80' },
      { name: 'node to ClusterIP with eTP:Local', sourceIP: TEST_NODE_IP, destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
      { name: 'node to NodePort with eTP:Local', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.1.1:80', masq: true },
      { name: 'node to LB with eTP:Local', sourceIP: TEST_NODE_IP, destIP: '5.6.7.8', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
      { name: 'external to ClusterIP with eTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
      { name: 'external to NodePort with eTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3002, output: '10.180.0.2:80' },
      { name: 'external to LB with eTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '5.6.7.8', destPort: 80, output: '10.180.0.2:80' },
      { name: 'pod to ClusterIP with iTP:Local', sourceIP: '10.0.0.2', destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80' },
      { name: 'pod to NodePort with iTP:Local', sourceIP: '10.0.0.2', destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
      { name: 'pod to LB with iTP:Local', sourceIP: '10.0.0.2', destIP: '9.10.11.12', destPort: 80, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
      { name: 'node to ClusterIP with iTP:Local', sourceIP: TEST_NODE_IP, destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'node to NodePort with iTP:Local', sourceIP: TEST_NODE_IP, destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
      { name: 'node to LB with iTP:Local', sourceIP: TEST_NODE_IP, destIP: '9.10.11.12', destPort: 80, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
      { name: 'external to ClusterIP with iTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '172.30.0.43', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'external to NodePort with iTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: TEST_NODE_IP, destPort: 3003, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
      { name: 'external to LB with iTP:Local', sourceIP: TEST_EXTERNAL_CLIENT, destIP: '9.10.11.12', destPort: 80, output: '10.180.0.3:80, 10.180.1.3:80', masq: true },
    ];
    type Override = { output?: string; masq?: boolean };
    const clusterIPMasq = ['pod to ClusterIP', 'pod to ClusterIP with eTP:Local', 'pod to ClusterIP with iTP:Local'];
    const noDetector: Record<string, Override> = {
      // Without a detector every ClusterIP client is taken for a pod: nothing is masqueraded.
      'node to ClusterIP': { masq: false },
      'node to ClusterIP with eTP:Local': { masq: false },
      'node to ClusterIP with iTP:Local': { masq: false },
      'external to ClusterIP': { masq: false },
      'external to ClusterIP with eTP:Local': { masq: false },
      'external to ClusterIP with iTP:Local': { masq: false },
      // ...and no short-circuit for pods: they get the local endpoints only.
      'pod to NodePort with eTP:Local': { output: '10.180.0.2:80' },
      'pod to LB with eTP:Local': { output: '10.180.0.2:80' },
    };
    const masqAll: Record<string, Override> = Object.fromEntries(clusterIPMasq.map((n) => [n, { masq: true }]));
    const masqAllNoDetector: Record<string, Override> = { ...masqAll, 'pod to NodePort with eTP:Local': noDetector['pod to NodePort with eTP:Local'], 'pod to LB with eTP:Local': noDetector['pod to LB with eTP:Local'] };

    it.each([
      { name: 'base', masqueradeAll: false, localDetector: true, overrides: {} as Record<string, Override> },
      { name: 'no LocalTrafficDetector', masqueradeAll: false, localDetector: false, overrides: noDetector },
      { name: 'masqueradeAll', masqueradeAll: true, localDetector: true, overrides: masqAll },
      { name: 'masqueradeAll, no LocalTrafficDetector', masqueradeAll: true, localDetector: false, overrides: masqAllNoDetector },
    ])('$name', async ({ masqueradeAll, localDetector, overrides }) => {
      const { proxier, nft } = newFakeProxier('IPv4', { masqueradeAll, noLocalDetector: !localDetector });
      const lbSvc = (ns: string, name: string, ip: string, nodePort: number, lbIP: string, extra: Record<string, unknown>) =>
        makeTestService(ns, name, (s) => {
          Object.assign(s.spec, { type: 'LoadBalancer', clusterIP: ip, ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort }], healthCheckNodePort: nodePort + 27000, ...extra });
          s.status.loadBalancer = { ingress: [{ ip: lbIP }] };
        });
      proxier.onServiceAdd(lbSvc('ns1', 'svc1', '172.30.0.41', 3001, '1.2.3.4', {}));
      proxier.onServiceAdd(lbSvc('ns2', 'svc2', '172.30.0.42', 3002, '5.6.7.8', { externalTrafficPolicy: 'Local' }));
      proxier.onServiceAdd(lbSvc('ns3', 'svc3', '172.30.0.43', 3003, '9.10.11.12', { internalTrafficPolicy: 'Local' }));
      for (const n of [1, 2, 3]) {
        proxier.onEndpointSliceAdd(
          makeTestEndpointSlice(`ns${n}`, `svc${n}`, 1, (eps) => {
            eps.addressType = 'IPv4';
            eps.endpoints = [
              { addresses: [`10.180.0.${n}`], nodeName: TEST_NODE_NAME },
              { addresses: [`10.180.1.${n}`], nodeName: 'remote' },
            ];
            eps.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
          }),
        );
      }
      await proxier.syncProxyRules();
      // Every override must name a flow and change it (as upstream checks).
      for (const [name, o] of Object.entries(overrides)) {
        const flow = base.find((f) => f.name === name);
        expect(flow).toBeDefined();
        if (o.masq !== undefined) expect(o.masq).not.toBe(flow!.masq ?? false);
        if (o.output !== undefined) expect(o.output).not.toBe(flow!.output);
      }
      expectFlows(nft, base.map((f) => ({ ...f, ...overrides[f.name] })));
    });
  });
});
