import type { V1Node, V1Service } from '@kubernetes/client-node';
import { explainTestConfig, explainTestNode, explainTestService, explainTestSlice } from '../../testing/explain-objects.js';
import { EXPLAIN_NODE, explainOnNode, externalClass, internalClass, onlyPort } from '../../testing/explain-harness.js';
import { explainService } from './explain-service.js';
import type { PortExplanation, TrafficClassExplanation } from './service-explanation.js';

const NODE = EXPLAIN_NODE;
const explain = explainOnNode;
const internal = internalClass;
const external = externalClass;
const reasons = (tc: TrafficClassExplanation): Record<string, string> => Object.fromEntries(tc.excluded.map((x) => [x.endpoint, x.reason]));

describe('explainService: endpoints and why some are left out', () => {
  it('reaches the ready endpoints and names each one left out: not ready, not serving, terminating while ready ones exist', () => {
    const x = explain(explainTestService(), [
      explainTestSlice([
        { ip: '10.244.1.5' },
        { ip: '10.244.2.6', node: 'node-2' },
        { ip: '10.244.1.7', ready: false },
        { ip: '10.244.1.8', ready: false, serving: false, terminating: true },
        { ip: '10.244.2.9', node: 'node-2', ready: false, serving: true, terminating: true },
      ]),
    ]);
    const port = onlyPort(x);
    expect(port.servicePort).toBe('ns/web:http');
    expect(internal(port)).toMatchObject({ policy: 'Cluster', applies: true, endpoints: ['10.244.1.5:8080', '10.244.2.6:8080'], terminatingFallback: false, noEndpoints: null });
    expect(reasons(internal(port))).toEqual({ '10.244.1.7:8080': 'not-ready', '10.244.1.8:8080': 'not-serving', '10.244.2.9:8080': 'terminating' });
    expect(internal(port).excluded.find((e) => e.reason === 'terminating')?.detail).toBe(
      'terminating, and ready endpoints exist (terminating endpoints are only used when none is ready)',
    );
    expect(port.sliceEndpoints.map((e) => e.endpoint)).toEqual(['10.244.1.5:8080', '10.244.1.7:8080', '10.244.1.8:8080', '10.244.2.6:8080', '10.244.2.9:8080']);
    // A ClusterIP Service has no external traffic.
    expect(external(port)).toMatchObject({ applies: false, endpoints: [], excluded: [], noEndpoints: null });
    expect(x).toMatchObject({ service: 'ns/web', type: 'ClusterIP', proxied: true, node: NODE, mode: 'iptables' });
    expect(x.reason).toBe('service ns/web is proxied on node-1 (IPv4) and every port reaches an endpoint');
  });

  it('falls back to serving terminating endpoints when none is ready (as upstream), leaving the non-serving ones out', () => {
    const port = onlyPort(
      explain(explainTestService(), [
        explainTestSlice([
          { ip: '10.244.1.5', ready: false, serving: true, terminating: true },
          { ip: '10.244.1.6', ready: false, serving: false, terminating: true },
          { ip: '10.244.1.7', ready: false },
        ]),
      ]),
    );
    expect(internal(port)).toMatchObject({ endpoints: ['10.244.1.5:8080'], terminatingFallback: true, noEndpoints: null });
    expect(reasons(internal(port))).toEqual({ '10.244.1.6:8080': 'not-serving', '10.244.1.7:8080': 'not-ready' });
  });

  it('rejects when the Service has no usable endpoint at all', () => {
    const x = explain(explainTestService(), [explainTestSlice([{ ip: '10.244.1.7', ready: false }])]);
    expect(internal(onlyPort(x)).noEndpoints).toEqual({ verdict: 'REJECT', reason: 'service ns/web has no ready endpoints for port ns/web:http' });
    expect(x.reason).toBe('service ns/web is proxied on node-1 (IPv4), but service ns/web has no ready endpoints for port ns/web:http');
    const none = onlyPort(explain(explainTestService(), []));
    expect(internal(none)).toMatchObject({ endpoints: [], excluded: [], noEndpoints: { verdict: 'REJECT' } });
  });

  it('leaves out endpoints whose slice has no port of the Service port name', () => {
    const port = onlyPort(
      explain(explainTestService(), [
        explainTestSlice([{ ip: '10.244.1.5' }]),
        explainTestSlice([{ ip: '10.244.3.3' }], { name: 'web-metrics', ports: [{ name: 'metrics', port: 9090 }] }),
      ]),
    );
    expect(internal(port).endpoints).toEqual(['10.244.1.5:8080']);
    expect(internal(port).excluded).toEqual([
      expect.objectContaining({ endpoint: '10.244.3.3', port: 0, reason: 'port-mismatch', detail: 'its EndpointSlice has no port named like ns/web:http (it has metrics/TCP 9090)' }),
    ]);
  });

  it("ignores other Services' slices and slices of the other family", () => {
    const port = onlyPort(
      explain(explainTestService(), [
        explainTestSlice([{ ip: '10.244.1.5' }]),
        explainTestSlice([{ ip: '10.244.9.9' }], { name: 'db-1', service: 'db' }),
        explainTestSlice([{ ip: '10.244.8.8' }], { name: 'web-other-ns', namespace: 'other' }),
        explainTestSlice([{ ip: 'fd00::5' }], { name: 'web-v6', addressType: 'IPv6' }),
      ]),
    );
    expect(internal(port).endpoints).toEqual(['10.244.1.5:8080']);
    expect(internal(port).excluded).toEqual([]);
  });
});

describe('explainService: traffic policies', () => {
  const nodePortSvc = (policy: 'Local' | 'Cluster'): V1Service =>
    explainTestService({ type: 'NodePort', externalTrafficPolicy: policy, ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] });

  it('externalTrafficPolicy Local with a local endpoint: external traffic reaches it only; the node itself reaches every endpoint', () => {
    const port = onlyPort(explain(nodePortSvc('Local'), [explainTestSlice([{ ip: '10.244.1.5' }, { ip: '10.244.2.6', node: 'node-2' }])]));
    expect(external(port)).toMatchObject({ policy: 'Local', applies: true, endpoints: ['10.244.1.5:8080'], noEndpoints: null, shortCircuitEndpoints: ['10.244.1.5:8080', '10.244.2.6:8080'] });
    expect(external(port).excluded).toEqual([expect.objectContaining({ endpoint: '10.244.2.6:8080', reason: 'other-node', detail: 'on node node-2, and externalTrafficPolicy is Local' })]);
    expect(external(port).masquerade.when).toBe('node-sources');
    expect(external(port).masquerade.reasons[0]).toBe('traffic the node itself sends to an external address is masqueraded');
    expect(internal(port)).toMatchObject({ policy: 'Cluster', endpoints: ['10.244.1.5:8080', '10.244.2.6:8080'] });
  });

  it('externalTrafficPolicy Local without a local endpoint: external traffic is dropped, cluster IP traffic still served', () => {
    const port = onlyPort(explain(nodePortSvc('Local'), [explainTestSlice([{ ip: '10.244.2.6', node: 'node-2' }])]));
    expect(external(port)).toMatchObject({ endpoints: [], noEndpoints: { verdict: 'DROP', reason: 'externalTrafficPolicy Local and no local endpoint of ns/web:http on node-1' } });
    expect(internal(port)).toMatchObject({ endpoints: ['10.244.2.6:8080'], noEndpoints: null });
  });

  it('externalTrafficPolicy Cluster: external traffic reaches every endpoint and is masqueraded', () => {
    const port = onlyPort(explain(nodePortSvc('Cluster'), [explainTestSlice([{ ip: '10.244.1.5' }, { ip: '10.244.2.6', node: 'node-2' }])]));
    expect(external(port)).toMatchObject({ policy: 'Cluster', endpoints: ['10.244.1.5:8080', '10.244.2.6:8080'], shortCircuitEndpoints: [] });
    expect(external(port).masquerade).toEqual({
      when: 'always',
      reasons: ['external traffic under externalTrafficPolicy Cluster is masqueraded', 'a pod reaching itself through the Service (hairpin) is masqueraded'],
    });
  });

  it('internalTrafficPolicy Local: cluster IP traffic reaches local endpoints only, and is dropped without one', () => {
    const svc = explainTestService({ internalTrafficPolicy: 'Local' });
    const withLocal = onlyPort(explain(svc, [explainTestSlice([{ ip: '10.244.1.5' }, { ip: '10.244.2.6', node: 'node-2' }])]));
    expect(internal(withLocal)).toMatchObject({ policy: 'Local', endpoints: ['10.244.1.5:8080'] });
    expect(reasons(internal(withLocal))).toEqual({ '10.244.2.6:8080': 'other-node' });
    const without = onlyPort(explain(svc, [explainTestSlice([{ ip: '10.244.2.6', node: 'node-2' }])]));
    expect(internal(without).noEndpoints).toEqual({ verdict: 'DROP', reason: 'internalTrafficPolicy Local and no local endpoint of ns/web:http on node-1' });
  });

  it('a Local policy prefers local ready endpoints over local terminating ones, and falls back to them', () => {
    const svc = explainTestService({ internalTrafficPolicy: 'Local' });
    const both = onlyPort(explain(svc, [explainTestSlice([{ ip: '10.244.1.5' }, { ip: '10.244.1.6', ready: false, serving: true, terminating: true }])]));
    expect(internal(both).endpoints).toEqual(['10.244.1.5:8080']);
    expect(reasons(internal(both))).toEqual({ '10.244.1.6:8080': 'terminating' });
    const onlyTerminating = onlyPort(explain(svc, [explainTestSlice([{ ip: '10.244.1.6', ready: false, serving: true, terminating: true }, { ip: '10.244.2.7', node: 'node-2' }])]));
    expect(internal(onlyTerminating)).toMatchObject({ endpoints: ['10.244.1.6:8080'], terminatingFallback: true });
  });
});

describe('explainService: topology hints', () => {
  const zoned = (zone: string): V1Node => explainTestNode(NODE, { addresses: ['10.0.0.1'], zone });

  it('PreferSameZone: only endpoints hinted for this zone; the others are left out for topology', () => {
    const port = onlyPort(
      explain(explainTestService({ trafficDistribution: 'PreferSameZone' }), [explainTestSlice([{ ip: '10.244.1.5', forZones: ['zone-a'] }, { ip: '10.244.2.6', node: 'node-2', forZones: ['zone-b'] }])], {
        node: zoned('zone-a'),
      }),
    );
    expect(internal(port)).toMatchObject({ endpoints: ['10.244.1.5:8080'], topology: 'PreferSameZone' });
    expect(internal(port).excluded).toEqual([
      expect.objectContaining({ endpoint: '10.244.2.6:8080', reason: 'topology-zone', zoneHints: ['zone-b'], detail: "topology hints send this node's traffic to endpoints hinted for zone zone-a; this one is hinted for another" }),
    ]);
  });

  it('takes the zone from ExplainNode.zone when given, over the Node labels', () => {
    const x = explainService({
      service: explainTestService(),
      endpointSlices: [explainTestSlice([{ ip: '10.244.1.5', forZones: ['zone-a'] }, { ip: '10.244.2.6', node: 'node-2', forZones: ['zone-b'] }])],
      node: { name: NODE, object: zoned('zone-a'), zone: 'zone-b' },
      config: explainTestConfig({ mode: 'iptables' }),
      families: ['IPv4'],
    });
    expect(internal(onlyPort(x)).endpoints).toEqual(['10.244.2.6:8080']);
  });

  it('hints for no endpoint of this zone are ignored (every ready endpoint is used)', () => {
    const port = onlyPort(explain(explainTestService(), [explainTestSlice([{ ip: '10.244.1.5', forZones: ['zone-b'] }, { ip: '10.244.2.6', forZones: ['zone-c'] }])], { node: zoned('zone-a') }));
    expect(internal(port)).toMatchObject({ endpoints: ['10.244.1.5:8080', '10.244.2.6:8080'], topology: '', excluded: [] });
  });

  it('PreferSameNode: only endpoints hinted for this node; with PreferSameTrafficDistribution off, zone hints decide', () => {
    const slices = [
      explainTestSlice([
        { ip: '10.244.1.5', forNodes: [NODE], forZones: ['zone-a'] },
        { ip: '10.244.1.6', node: 'node-3', forNodes: ['node-3'], forZones: ['zone-a'] },
        { ip: '10.244.2.6', node: 'node-2', forNodes: ['node-2'], forZones: ['zone-b'] },
      ]),
    ];
    const port = onlyPort(explain(explainTestService(), slices, { node: zoned('zone-a') }));
    expect(internal(port)).toMatchObject({ endpoints: ['10.244.1.5:8080'], topology: 'PreferSameNode' });
    expect(reasons(internal(port))).toEqual({ '10.244.1.6:8080': 'topology-node', '10.244.2.6:8080': 'topology-node' });
    const gateOff = onlyPort(explain(explainTestService(), slices, { node: zoned('zone-a'), config: { mode: 'iptables', featureGates: { PreferSameTrafficDistribution: false } } }));
    expect(internal(gateOff)).toMatchObject({ endpoints: ['10.244.1.5:8080', '10.244.1.6:8080'], topology: 'PreferSameZone' });
    expect(reasons(internal(gateOff))).toEqual({ '10.244.2.6:8080': 'topology-zone' });
  });

  it('topology does not narrow a Local policy', () => {
    const svc = explainTestService({ type: 'NodePort', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80, nodePort: 30080 }] });
    const port = onlyPort(explain(svc, [explainTestSlice([{ ip: '10.244.1.5', forZones: ['zone-b'] }, { ip: '10.244.2.6', node: 'node-2', forZones: ['zone-a'] }])], { node: zoned('zone-a') }));
    expect(external(port)).toMatchObject({ endpoints: ['10.244.1.5:8080'], topology: '' });
    expect(internal(port)).toMatchObject({ endpoints: ['10.244.2.6:8080'], topology: 'PreferSameZone' });
  });
});

describe('explainService and AllowServiceExternalIPs', () => {
  const svc = explainTestService({ externalIPs: ['192.0.2.10'] });
  const slices = [explainTestSlice([{ ip: '10.244.1.5' }])];
  const kinds = (p: PortExplanation): string[] => p.addresses.map((a) => a.kind);

  it('explains the external IP while the gate has its default (on)', () => {
    const port = onlyPort(explain(svc, slices));
    expect(kinds(port)).toEqual(['clusterIP', 'externalIP']);
    expect(external(port).applies).toBe(true);
  });

  it('follows the explained configuration\'s gate: off, the external IP is not an address and nothing arrives externally', () => {
    const port = onlyPort(explain(svc, slices, { config: { mode: 'iptables', featureGates: { AllowServiceExternalIPs: false } } }));
    expect(kinds(port)).toEqual(['clusterIP']);
    expect(external(port).applies).toBe(false);
  });
});
