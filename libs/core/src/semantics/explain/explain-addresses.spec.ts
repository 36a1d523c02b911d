import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import { explainTestNode, explainTestService, explainTestSlice } from '../../testing/explain-objects.js';
import { EXPLAIN_NODE, explainOnNode, externalClass, internalClass, onlyPort } from '../../testing/explain-harness.js';
import type { PortExplanation } from './service-explanation.js';

const NODE = EXPLAIN_NODE;
const explain = explainOnNode;
const internal = internalClass;
const external = externalClass;
const READY = [explainTestSlice([{ ip: '10.244.1.5' }, { ip: '10.244.2.6', node: 'node-2' }])];

const lbService = (spec: Parameters<typeof explainTestService>[0] = {}, ingress: V1LoadBalancerIngress[] = [{ ip: '203.0.113.5' }]): V1Service =>
  explainTestService({ type: 'LoadBalancer', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }], ...spec }, { ingress });

describe('explainService: addresses by traffic class', () => {
  it('lists the cluster IP, external IPs, load-balancer IPs with ipMode, and NodePorts on the node addresses', () => {
    const svc = lbService({ externalIPs: ['192.0.2.10', 'fd00::10'] }, [{ ip: '203.0.113.5' }, { ip: '203.0.113.7', ipMode: 'VIP' }, { ip: '203.0.113.6', ipMode: 'Proxy' }]);
    const port = onlyPort(explain(svc, READY, { addresses: ['10.0.0.1', '192.168.5.1', 'fd00::1'] }));
    expect(port.addresses.map((a) => [a.trafficClass, a.kind, a.address, a.programmed, a.ipMode])).toEqual([
      ['internal', 'clusterIP', '10.96.0.10:80', true, undefined],
      ['external', 'externalIP', '192.0.2.10:80', true, undefined],
      ['external', 'loadBalancerIP', '203.0.113.5:80', true, 'VIP'],
      ['external', 'loadBalancerIP', '203.0.113.7:80', true, 'VIP'],
      ['external', 'loadBalancerIP', '203.0.113.6:80', false, 'Proxy'],
      ['external', 'nodePort', '10.0.0.1:30080', true, undefined],
      ['external', 'nodePort', '192.168.5.1:30080', true, undefined],
      // iptables.localhostNodePorts is on by default, and no nodePortAddresses selects 127.0.0.0/8 too.
      ['external', 'nodePort', '127.0.0.1:30080', true, undefined],
    ]);
    expect(port.addresses.find((a) => a.ipMode === 'Proxy')?.note).toBe(
      'ipMode Proxy: the load balancer sends traffic to the node addresses itself, so kube-proxy programs no rule for this IP',
    );
    expect(port.nodePort).toMatchObject({ nodePort: 30080, allLocalAddresses: true, localhost: true });
  });

  it('a LoadBalancer whose only ingress has ipMode Proxy still answers on its NodePort', () => {
    const port = onlyPort(explain(lbService({}, [{ ip: '203.0.113.6', ipMode: 'Proxy' }]), READY));
    expect(port.addresses.filter((a) => a.programmed).map((a) => a.address)).toEqual(['10.96.0.10:80', '10.0.0.1:30080', '127.0.0.1:30080']);
    expect(external(port)).toMatchObject({ applies: true, endpoints: ['10.244.1.5:8080', '10.244.2.6:8080'] });
  });

  it('nodePortAddresses selects the node addresses in its ranges; none selected means nowhere', () => {
    const addresses = ['10.0.0.1', '192.168.5.1'];
    const picked = onlyPort(explain(lbService(), READY, { addresses, config: { mode: 'iptables', nodePortAddresses: ['192.168.0.0/16'] } }));
    expect(picked.nodePort).toEqual({
      nodePort: 30080,
      allLocalAddresses: false,
      addresses: ['192.168.5.1'],
      localhost: false,
      reason: 'nodePortAddresses (192.168.0.0/16) selects these node addresses',
    });
    expect(picked.addresses.filter((a) => a.kind === 'nodePort').map((a) => a.address)).toEqual(['192.168.5.1:30080']);
    const primary = onlyPort(explain(lbService(), READY, { addresses, nodeIPs: { IPv4: '10.0.0.1' }, config: { mode: 'iptables', nodePortAddresses: ['primary'] } }));
    expect(primary.nodePort.addresses).toEqual(['10.0.0.1']);
    const nowhere = onlyPort(explain(lbService(), READY, { addresses, config: { mode: 'iptables', nodePortAddresses: ['172.16.0.0/12'] } }));
    expect(nowhere.nodePort.addresses).toEqual([]);
    expect(nowhere.nodePort.reason).toContain('selects none of the node');
  });

  it("nftables mode without nodePortAddresses answers on the node's primary IP only, as upstream", () => {
    const addresses = ['10.0.0.1', '192.168.5.1'];
    const nft = onlyPort(explain(lbService(), READY, { addresses, config: { mode: 'nftables' } }));
    expect(nft.nodePort).toEqual({
      nodePort: 30080,
      allLocalAddresses: false,
      addresses: ['10.0.0.1'],
      localhost: false,
      reason: "nodePortAddresses (10.0.0.1/32) selects these node addresses (nftables mode: no nodePortAddresses means the node's primary IP)",
    });
    const given = onlyPort(explain(lbService(), READY, { addresses, nodeIPs: { IPv4: '10.0.0.1' }, config: { mode: 'nftables', nodePortAddresses: ['0.0.0.0/0'] } }));
    expect(given.nodePort).toMatchObject({ allLocalAddresses: true, addresses });
  });

  it('localhost NodePorts: iptables mode with a loopback selection answers on 127.0.0.0/8; nftables and a flag off do not', () => {
    const config = { nodePortAddresses: ['127.0.0.0/8', '10.0.0.0/8'] };
    // A host's addresses include its loopback one, which the selection then picks.
    const addresses = ['10.0.0.1', '127.0.0.1'];
    const ipt = onlyPort(explain(lbService(), READY, { addresses, config: { mode: 'iptables', ...config } }));
    expect(ipt.nodePort).toMatchObject({ localhost: true, addresses: ['10.0.0.1', '127.0.0.1'] });
    expect(ipt.addresses.filter((a) => a.kind === 'nodePort').map((a) => a.address)).toEqual(['10.0.0.1:30080', '127.0.0.1:30080']);
    const nft = onlyPort(explain(lbService(), READY, { addresses, config: { mode: 'nftables', ...config } }));
    expect(nft.nodePort).toMatchObject({ localhost: false, addresses: ['10.0.0.1'] });
    const off = onlyPort(explain(lbService(), READY, { addresses, config: { mode: 'iptables', iptables: { localhostNodePorts: false } } }));
    expect(off.nodePort).toMatchObject({ localhost: false, allLocalAddresses: true, addresses: ['10.0.0.1'] });
  });

  it('dual-stack: one entry per port and family, primary family first, IPv6 endpoints bracketed', () => {
    const svc = explainTestService({
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10', 'fd00:96::10'],
      ipFamilies: ['IPv4', 'IPv6'],
      ipFamilyPolicy: 'PreferDualStack',
      ports: [
        { name: 'http', port: 80, protocol: 'TCP' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
    });
    const slices = [
      explainTestSlice([{ ip: '10.244.1.5' }], { ports: [{ name: 'http', port: 8080 }, { name: 'dns', port: 5353, protocol: 'UDP' }] }),
      explainTestSlice([{ ip: 'fd00:244::5' }, { ip: 'fd00:244::6', ready: false }], { name: 'web-v6', addressType: 'IPv6', ports: [{ name: 'http', port: 8080 }, { name: 'dns', port: 5353, protocol: 'UDP' }] }),
    ];
    const x = explain(svc, slices, { families: ['IPv4', 'IPv6'], addresses: ['10.0.0.1', 'fd00::1'] });
    expect(x.ports.map((p) => [p.servicePort, p.family, p.protocol])).toEqual([
      ['ns/web:http', 'IPv4', 'TCP'],
      ['ns/web:http', 'IPv6', 'TCP'],
      ['ns/web:dns', 'IPv4', 'UDP'],
      ['ns/web:dns', 'IPv6', 'UDP'],
    ]);
    const v6 = x.ports[1] as PortExplanation;
    expect(v6.addresses[0]?.address).toBe('[fd00:96::10]:80');
    expect(internal(v6).endpoints).toEqual(['[fd00:244::5]:8080']);
    expect(internal(v6).excluded.map((e) => [e.endpoint, e.reason])).toEqual([['[fd00:244::6]:8080', 'not-ready']]);
    expect(internal(x.ports[3] as PortExplanation).endpoints).toEqual(['[fd00:244::5]:5353']);
  });

  it('a proxy serving one family explains only that family, and says so when the Service has none of it', () => {
    const svc = explainTestService({ clusterIPs: ['10.96.0.10', 'fd00:96::10'], ipFamilies: ['IPv4', 'IPv6'] });
    const v6 = explain(svc, READY, { families: ['IPv6'] });
    expect(v6.ports.map((p) => p.family)).toEqual(['IPv6']);
    expect(v6.notes).toEqual(['the Service also has an IPv4 cluster IP (10.96.0.10), which this proxy does not serve (it serves IPv6)']);
    const v4only = explain(explainTestService(), READY, { families: ['IPv6'] });
    expect(v4only).toMatchObject({ proxied: false, ports: [] });
    expect(v4only.reason).toBe('the Service has no valid cluster IP or port of IPv6 (it has IPv4); this proxy programs nothing for it');
  });
});

describe('explainService: masquerading', () => {
  it('without a local-traffic detector cluster IP traffic keeps its source (hairpin aside)', () => {
    expect(internal(onlyPort(explain(explainTestService(), READY))).masquerade).toEqual({
      when: 'never',
      reasons: ['no local-traffic detector is configured (clusterCIDR or detectLocalMode), so cluster IP traffic keeps its source', 'a pod reaching itself through the Service (hairpin) is masqueraded'],
    });
  });

  it('masqueradeAll masquerades all cluster IP traffic (iptables section; nftables mode reads its own)', () => {
    const ipt = internal(onlyPort(explain(explainTestService(), READY, { config: { mode: 'iptables', iptables: { masqueradeAll: true } } })));
    expect(ipt.masquerade.when).toBe('always');
    expect(ipt.masquerade.reasons[0]).toBe('masqueradeAll is set');
    const nftIgnoresIptables = internal(onlyPort(explain(explainTestService(), READY, { config: { mode: 'nftables', iptables: { masqueradeAll: true } } })));
    expect(nftIgnoresIptables.masquerade.when).toBe('never');
    const nft = internal(onlyPort(explain(explainTestService(), READY, { config: { mode: 'nftables', nftables: { masqueradeAll: true } } })));
    expect(nft.masquerade.when).toBe('always');
  });

  it('off-cluster source detection: clusterCIDR, the Node pod CIDR, or pod interfaces', () => {
    const cidr = internal(onlyPort(explain(explainTestService(), READY, { config: { mode: 'iptables', clusterCIDR: '10.244.0.0/16' } })));
    expect(cidr.masquerade.when).toBe('off-cluster-sources');
    expect(cidr.masquerade.reasons[0]).toBe('traffic to a cluster IP from outside the cluster CIDR is masqueraded (10.244.0.0/16)');
    const node = explainTestNode(NODE, { addresses: ['10.0.0.1'], podCIDRs: ['10.244.1.0/24'] });
    const nodeCIDR = internal(onlyPort(explain(explainTestService(), READY, { node, config: { mode: 'iptables', detectLocalMode: 'NodeCIDR' } })));
    expect(nodeCIDR.masquerade.reasons[0]).toBe('traffic to a cluster IP from outside the cluster CIDR is masqueraded (10.244.1.0/24)');
    const prefix = internal(onlyPort(explain(explainTestService(), READY, { config: { mode: 'iptables', detectLocalMode: 'InterfaceNamePrefix', detectLocal: { interfaceNamePrefix: 'veth' } } })));
    expect(prefix.masquerade.reasons[0]).toBe("traffic to a cluster IP that does not arrive on veth* (the pods' interfaces) is masqueraded");
  });

  it('external traffic under a Local policy: the node itself is masqueraded, pods bypass the policy when detected', () => {
    const svc = lbService({ externalTrafficPolicy: 'Local' });
    const tc = external(onlyPort(explain(svc, READY, { config: { mode: 'iptables', clusterCIDR: '10.244.0.0/16' } })));
    expect(tc.masquerade).toEqual({
      when: 'node-sources',
      reasons: [
        'traffic the node itself sends to an external address is masqueraded',
        'pods reaching an external address are sent to the cluster endpoints, without masquerade',
        'external clients keep their source address (externalTrafficPolicy Local)',
        'a pod reaching itself through the Service (hairpin) is masqueraded',
      ],
    });
  });

  it('userspace mode relays through its socket: no masquerade rule, whatever the configuration', () => {
    const tc = internal(onlyPort(explain(explainTestService(), READY, { config: { mode: 'userspace', iptables: { masqueradeAll: true } } })));
    expect(tc.masquerade.when).toBe('never');
  });
});

describe('explainService: source ranges, health check, affinity, unproxied Services', () => {
  it('enforces loadBalancerSourceRanges of the family on the load-balancer IPs while there are endpoints', () => {
    const svc = lbService({ loadBalancerSourceRanges: ['192.0.2.0/24', ' 198.51.100.0/24 ', 'fd00::/8'] });
    const port = onlyPort(explain(svc, READY));
    expect(port.sourceRanges).toMatchObject({ ranges: ['192.0.2.0/24', '198.51.100.0/24'], enforced: true, allowsLoadBalancerIPs: false });
    expect(port.sourceRanges.reason).toBe('only sources in 192.0.2.0/24, 198.51.100.0/24 reach the load-balancer IPs of ns/web:http; any other source is dropped');
    const nodeInside = onlyPort(explain(svc, READY, { nodeIPs: { IPv4: '192.0.2.77' } }));
    expect(nodeInside.sourceRanges.allowsLoadBalancerIPs).toBe(true);
    const noEndpoints = onlyPort(explain(svc, []));
    expect(noEndpoints.sourceRanges.enforced).toBe(false);
    const everyone = onlyPort(explain(lbService({ loadBalancerSourceRanges: ['0.0.0.0/0', '192.0.2.0/24'] }), READY));
    expect(everyone.sourceRanges).toMatchObject({ ranges: [], enforced: false });
  });

  it('reports the health-check node port of a Local LoadBalancer and ClientIP affinity', () => {
    const svc = lbService({ externalTrafficPolicy: 'Local', healthCheckNodePort: 32000, sessionAffinity: 'ClientIP' });
    const port = onlyPort(explain(svc, READY));
    expect(port.healthCheckNodePort).toBe(32000);
    expect(port.sessionAffinitySeconds).toBe(10800);
    expect(onlyPort(explain(lbService(), READY)).healthCheckNodePort).toBe(0);
  });

  it('says why headless and ExternalName Services are not proxied', () => {
    const headless = explain(explainTestService({ clusterIP: 'None', clusterIPs: ['None'] }), READY);
    expect(headless).toMatchObject({ proxied: false, ports: [] });
    expect(headless.reason).toBe("headless Service (clusterIP None): DNS returns its endpoints' addresses; kube-proxy programs nothing for it");
    const ext = explain(explainTestService({ type: 'ExternalName', externalName: 'db.example.com' }), []);
    expect(ext.reason).toBe('ExternalName Service: DNS answers with db.example.com; kube-proxy programs nothing for it');
  });

  it('keeps what the proxier would warn about as notes', () => {
    const svc = explainTestService({ ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'bad', port: 0, protocol: 'TCP' }] });
    const x = explain(svc, [explainTestSlice([{ ip: '10.244.1.5' }], { ports: [{ name: 'http', port: 8080, protocol: 'UDP' }] })]);
    expect(x.notes).toContain('Skipping Service port with an invalid port number (field spec.ports[1].port, value 0)');
    expect(x.notes).toContain('EndpointSlice port http of ns/web:http is UDP, the Service port is TCP');
  });

  it('is plain JSON: a round trip through JSON changes nothing', () => {
    const svc = lbService({ externalTrafficPolicy: 'Local', healthCheckNodePort: 32000, externalIPs: ['192.0.2.10'], loadBalancerSourceRanges: ['192.0.2.0/24'] }, [
      { ip: '203.0.113.5' },
      { ip: '203.0.113.6', ipMode: 'Proxy' },
    ]);
    const x = explain(svc, [explainTestSlice([{ ip: '10.244.1.5', forZones: ['a'] }, { ip: '10.244.2.6', node: 'node-2', ready: false, terminating: true }])]);
    expect(JSON.parse(JSON.stringify(x))).toEqual(x);
  });
});
