/**
 * Golden tests: the expected iptables-restore texts are upstream's (pkg/proxy/iptables/proxier_test.go,
 * v1.31+), compared after upstream's own normalisation (sortIPTablesRules), plus one raw-order test
 * written from upstream's syncProxyRules write order.
 */
import { countRules } from '@kube-proxy/netfilter-iptables/testing';
import { chainRules, dedent, rulesForComparison } from './testing/assertions.js';
import { FakeProxier, makeTestService } from './testing/fake-proxier.js';
import { UPSTREAM_OVERALL_EXPECTED } from '../trace/testing/upstream-overall-dump.js';

function expectRules(expected: string, result: string, checkConsistency = true): void {
  const r = rulesForComparison(expected, result);
  expect(r.actual).toBe(r.expected);
  if (checkConsistency) expect(r.consistency).toBeNull();
}

describe('TestOverallIPTablesRules', () => {
  it('creates a variety of services and writes exactly the expected rules', () => {
    const fp = new FakeProxier();
    // create ClusterIP service
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    // create LoadBalancer service with Local traffic policy
    fp.addService(
      makeTestService('ns2', 'svc2', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.externalTrafficPolicy = 'Local';
        svc.spec.clusterIP = '172.30.0.42';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
        svc.spec.externalIPs = ['192.168.99.22'];
        svc.spec.healthCheckNodePort = 30000;
      }),
    );
    // create NodePort service
    fp.addService(
      makeTestService('ns3', 'svc3', (svc) => {
        svc.spec.type = 'NodePort';
        svc.spec.clusterIP = '172.30.0.43';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }];
      }),
    );
    // create ExternalIP service
    fp.addService(
      makeTestService('ns4', 'svc4', (svc) => {
        svc.spec.type = 'NodePort';
        svc.spec.clusterIP = '172.30.0.44';
        svc.spec.externalIPs = ['192.168.99.33'];
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80 }];
      }),
    );
    // create LoadBalancer service with Cluster traffic policy, source ranges, and session affinity
    fp.addService(
      makeTestService('ns5', 'svc5', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.externalTrafficPolicy = 'Cluster';
        svc.spec.clusterIP = '172.30.0.45';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }];
        svc.status.loadBalancer = { ingress: [{ ip: '5.6.7.8' }] };
        svc.spec.healthCheckNodePort = 30000;
        // Extra whitespace to ensure that invalid value will not result in a crash, for backward compatibility.
        svc.spec.loadBalancerSourceRanges = [' 203.0.113.0/25'];
        svc.spec.sessionAffinity = 'ClientIP';
        svc.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
      }),
    );
    // create ClusterIP service with no endpoints
    fp.addService(
      makeTestService('ns6', 'svc6', (svc) => {
        svc.spec.type = 'ClusterIP';
        svc.spec.clusterIP = '172.30.0.46';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80 }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }]);
    // Since we aren't setting its NodeName, this endpoint will be considered non-local and ignored.
    fp.setEndpoints('ns2', 'svc2', 'p80', 80, [{ ip: '10.180.0.2' }]);
    fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.180.0.3' }]);
    fp.setEndpoints('ns4', 'svc4', 'p80', 80, [{ ip: '10.180.0.4' }, { ip: '10.180.0.5', nodeName: 'test-node' }]);
    fp.setEndpoints('ns5', 'svc5', 'p80', 80, [{ ip: '10.180.0.3' }]);

    const result = fp.syncProxyRules();
    expect(fp.lastRestoreError).toBeUndefined();

    // Upstream's expected text is one fixture, also traced by the iptables tracer's specs.
    const expected = UPSTREAM_OVERALL_EXPECTED;
    expectRules(expected, fp.iptablesData);

    // Upstream: the nat rule metric equals the number of nat rules in the payload.
    expect(result.natRuleCount).toBe(countRules(fp.iptablesData, 'nat'));
    expect(result.natRuleCountTotal).toBe(countRules(fp.iptablesData, 'nat'));
    expect(result.filterRuleCount).toBe(countRules(fp.iptablesData, 'filter'));
    expect(result.noLocalEndpoints).toEqual({ internal: 0, external: 1 });
  });
});

describe('TestBadIPs', () => {
  it('writes canonical addresses for "bad" IPs and CIDRs', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '172.30.0.041';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.004' }] };
        svc.spec.externalIPs = ['192.168.099.022'];
        svc.spec.loadBalancerSourceRanges = ['203.0.113.000/025'];
      }),
    );
    // Endpoint IPs are canonicalised by core's EndpointSlice tracking; here we give the canonical form.
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }]);
    fp.syncProxyRules();

    const expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      -A KUBE-PROXY-FIREWALL -m comment --comment "ns1/svc1:p80 traffic not accepted by KUBE-FW-XPGD46QRK7WJZT7O" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXT-XPGD46QRK7WJZT7O - [0:0]
      :KUBE-FW-XPGD46QRK7WJZT7O - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
      :KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
      -A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp -d 127.0.0.0/8 --dport 3001 -m nfacct --nfacct-name localhost_nps_accepted_pkts -j KUBE-EXT-XPGD46QRK7WJZT7O
      -A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 3001 -j KUBE-EXT-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 external IP" -m tcp -p tcp -d 192.168.99.22 --dport 80 -j KUBE-EXT-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 loadbalancer IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-FW-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-EXT-XPGD46QRK7WJZT7O -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ
      -A KUBE-EXT-XPGD46QRK7WJZT7O -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-FW-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 loadbalancer IP" -s 203.0.113.0/25 -j KUBE-EXT-XPGD46QRK7WJZT7O
      -A KUBE-FW-XPGD46QRK7WJZT7O -m comment --comment "other traffic to ns1/svc1:p80 will be dropped by KUBE-PROXY-FIREWALL"
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ
      COMMIT
    `;
    expectRules(expected, fp.iptablesData);
  });
});

// The first state of TestSyncProxyRulesRepeated, compared WITHOUT normalisation: the raw order
// below is upstream syncProxyRules' write order (top-level chain lines; postrouting/mark rules;
// per service: KUBE-SERVICES rule, SVC masquerade rule, SVC→SEP rules, SEP rules; then the
// nodeports tail rule; filter: KUBE-FIREWALL, then KUBE-FORWARD), services in key order.
describe('raw payload order', () => {
  it('matches upstream syncProxyRules write order', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns2', 'svc2', (svc) => {
        svc.spec.type = 'ClusterIP';
        svc.spec.clusterIP = '172.30.0.42';
        svc.spec.ports = [{ name: 'p8080', port: 8080, protocol: 'TCP' }];
      }),
    );
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'ClusterIP';
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.0.1.1' }]);
    fp.setEndpoints('ns2', 'svc2', 'p8080', 8080, [{ ip: '10.0.2.1' }]);
    fp.syncProxyRules();
    expect(fp.iptablesData).toBe(
      dedent(`
        *filter
        :KUBE-SERVICES - [0:0]
        :KUBE-EXTERNAL-SERVICES - [0:0]
        :KUBE-FORWARD - [0:0]
        :KUBE-NODEPORTS - [0:0]
        :KUBE-PROXY-FIREWALL - [0:0]
        :KUBE-FIREWALL - [0:0]
        -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
        -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
        -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
        -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
        COMMIT
        *nat
        :KUBE-SERVICES - [0:0]
        :KUBE-NODEPORTS - [0:0]
        :KUBE-POSTROUTING - [0:0]
        :KUBE-MARK-MASQ - [0:0]
        :KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
        :KUBE-SEP-SNQ3ZNILQDEJNDQO - [0:0]
        :KUBE-SVC-2VJB64SDSIJUP5T6 - [0:0]
        :KUBE-SEP-UHEGFW77JX3KXTOV - [0:0]
        -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
        -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
        -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
        -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
        -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
        -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
        -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.0.1.1:80" -j KUBE-SEP-SNQ3ZNILQDEJNDQO
        -A KUBE-SEP-SNQ3ZNILQDEJNDQO -m comment --comment ns1/svc1:p80 -s 10.0.1.1 -j KUBE-MARK-MASQ
        -A KUBE-SEP-SNQ3ZNILQDEJNDQO -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80
        -A KUBE-SERVICES -m comment --comment "ns2/svc2:p8080 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 8080 -j KUBE-SVC-2VJB64SDSIJUP5T6
        -A KUBE-SVC-2VJB64SDSIJUP5T6 -m comment --comment "ns2/svc2:p8080 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 8080 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
        -A KUBE-SVC-2VJB64SDSIJUP5T6 -m comment --comment "ns2/svc2:p8080 -> 10.0.2.1:8080" -j KUBE-SEP-UHEGFW77JX3KXTOV
        -A KUBE-SEP-UHEGFW77JX3KXTOV -m comment --comment ns2/svc2:p8080 -s 10.0.2.1 -j KUBE-MARK-MASQ
        -A KUBE-SEP-UHEGFW77JX3KXTOV -m comment --comment ns2/svc2:p8080 -m tcp -p tcp -j DNAT --to-destination 10.0.2.1:8080
        -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
        COMMIT
      `),
    );
  });
});

describe('TestSyncProxyRulesRepeated (partial syncs)', () => {
  it('rewrites only changed services, deletes stale chains, and recovers from a failed partial restore', () => {
    const fp = new FakeProxier();
    const svc2 = makeTestService('ns2', 'svc2', (svc) => {
      svc.spec.type = 'ClusterIP';
      svc.spec.clusterIP = '172.30.0.42';
      svc.spec.ports = [{ name: 'p8080', port: 8080, protocol: 'TCP' }];
    });
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'ClusterIP';
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.addService(svc2);
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.0.1.1' }]);
    fp.setEndpoints('ns2', 'svc2', 'p8080', 8080, [{ ip: '10.0.2.1' }]);

    let result = fp.syncProxyRules();

    let expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-SNQ3ZNILQDEJNDQO - [0:0]
      :KUBE-SEP-UHEGFW77JX3KXTOV - [0:0]
      :KUBE-SVC-2VJB64SDSIJUP5T6 - [0:0]
      :KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns2/svc2:p8080 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 8080 -j KUBE-SVC-2VJB64SDSIJUP5T6
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-SNQ3ZNILQDEJNDQO -m comment --comment ns1/svc1:p80 -s 10.0.1.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-SNQ3ZNILQDEJNDQO -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80
      -A KUBE-SEP-UHEGFW77JX3KXTOV -m comment --comment ns2/svc2:p8080 -s 10.0.2.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-UHEGFW77JX3KXTOV -m comment --comment ns2/svc2:p8080 -m tcp -p tcp -j DNAT --to-destination 10.0.2.1:8080
      -A KUBE-SVC-2VJB64SDSIJUP5T6 -m comment --comment "ns2/svc2:p8080 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 8080 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-2VJB64SDSIJUP5T6 -m comment --comment "ns2/svc2:p8080 -> 10.0.2.1:8080" -j KUBE-SEP-UHEGFW77JX3KXTOV
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.0.1.1:80" -j KUBE-SEP-SNQ3ZNILQDEJNDQO
      COMMIT
    `;
    expectRules(expected, fp.iptablesData);
    let rulesTotal = countRules(dedent(expected), 'nat');
    expect(result.natRuleCount).toBe(rulesTotal);
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Add a new service and its endpoints. (This will only sync the SVC and SEP rules
    // for the new service, not the existing ones.)
    const svc3 = makeTestService('ns3', 'svc3', (svc) => {
      svc.spec.type = 'ClusterIP';
      svc.spec.clusterIP = '172.30.0.43';
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
    });
    fp.addService(svc3);
    fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.0.3.1' }]);
    result = fp.syncProxyRules();

    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-BSWRHOQ77KEXZLNL - [0:0]
      :KUBE-SVC-X27LE4BHSL4DOUIK - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns2/svc2:p8080 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 8080 -j KUBE-SVC-2VJB64SDSIJUP5T6
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-BSWRHOQ77KEXZLNL -m comment --comment ns3/svc3:p80 -s 10.0.3.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-BSWRHOQ77KEXZLNL -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.3.1:80
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.0.3.1:80" -j KUBE-SEP-BSWRHOQ77KEXZLNL
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    // We added 1 KUBE-SERVICES rule, 2 KUBE-SVC-X27LE4BHSL4DOUIK rules, and 2 KUBE-SEP-BSWRHOQ77KEXZLNL rules.
    rulesTotal += 5;
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Delete a service. (Won't update the other services.)
    fp.deleteService('ns2', 'svc2');
    fp.deleteEndpoints('ns2', 'svc2', 'p8080');
    result = fp.syncProxyRules();

    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-UHEGFW77JX3KXTOV - [0:0]
      :KUBE-SVC-2VJB64SDSIJUP5T6 - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -X KUBE-SEP-UHEGFW77JX3KXTOV
      -X KUBE-SVC-2VJB64SDSIJUP5T6
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    expect(result.staleChainsDeleted).toBe(2);
    // We deleted 1 KUBE-SERVICES rule, 2 KUBE-SVC-2VJB64SDSIJUP5T6 rules, and 2 KUBE-SEP-UHEGFW77JX3KXTOV rules
    rulesTotal -= 5;
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Add a service, sync, then add its endpoints. (The first sync will be a no-op other
    // than adding the REJECT rule. The second sync will create the new service.)
    const svc4 = makeTestService('ns4', 'svc4', (svc) => {
      svc.spec.type = 'ClusterIP';
      svc.spec.clusterIP = '172.30.0.44';
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
    });
    fp.addService(svc4);
    result = fp.syncProxyRules();
    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j REJECT
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    // The REJECT rule is in "filter", not NAT, so the number of NAT rules hasn't changed.
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    fp.setEndpoints('ns4', 'svc4', 'p80', 80, [{ ip: '10.0.4.1' }]);
    result = fp.syncProxyRules();
    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-AYCN5HPXMIRJNJXU - [0:0]
      :KUBE-SVC-4SW47YFZTEDKD3PK - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j KUBE-SVC-4SW47YFZTEDKD3PK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-AYCN5HPXMIRJNJXU -m comment --comment ns4/svc4:p80 -s 10.0.4.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-AYCN5HPXMIRJNJXU -m comment --comment ns4/svc4:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.4.1:80
      -A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 -> 10.0.4.1:80" -j KUBE-SEP-AYCN5HPXMIRJNJXU
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    // We added 1 KUBE-SERVICES rule, 2 KUBE-SVC-4SW47YFZTEDKD3PK rules, and 2 KUBE-SEP-AYCN5HPXMIRJNJXU rules
    rulesTotal += 5;
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Change an endpoint of an existing service. This will cause its SVC and SEP chains to be rewritten.
    fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.0.3.2' }]);
    result = fp.syncProxyRules();
    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-BSWRHOQ77KEXZLNL - [0:0]
      :KUBE-SEP-DKCFIS26GWF2WLWC - [0:0]
      :KUBE-SVC-X27LE4BHSL4DOUIK - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j KUBE-SVC-4SW47YFZTEDKD3PK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-DKCFIS26GWF2WLWC -m comment --comment ns3/svc3:p80 -s 10.0.3.2 -j KUBE-MARK-MASQ
      -A KUBE-SEP-DKCFIS26GWF2WLWC -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.3.2:80
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.0.3.2:80" -j KUBE-SEP-DKCFIS26GWF2WLWC
      -X KUBE-SEP-BSWRHOQ77KEXZLNL
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    // We rewrote existing rules but did not change the overall number of rules.
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Add an endpoint to a service. This will cause its SVC and SEP chains to be rewritten.
    fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.0.3.2' }, { ip: '10.0.3.3' }]);
    result = fp.syncProxyRules();
    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-DKCFIS26GWF2WLWC - [0:0]
      :KUBE-SEP-JVVZVJ7BSEPPRNBS - [0:0]
      :KUBE-SVC-X27LE4BHSL4DOUIK - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j KUBE-SVC-4SW47YFZTEDKD3PK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-DKCFIS26GWF2WLWC -m comment --comment ns3/svc3:p80 -s 10.0.3.2 -j KUBE-MARK-MASQ
      -A KUBE-SEP-DKCFIS26GWF2WLWC -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.3.2:80
      -A KUBE-SEP-JVVZVJ7BSEPPRNBS -m comment --comment ns3/svc3:p80 -s 10.0.3.3 -j KUBE-MARK-MASQ
      -A KUBE-SEP-JVVZVJ7BSEPPRNBS -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.3.3:80
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.0.3.2:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-DKCFIS26GWF2WLWC
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.0.3.3:80" -j KUBE-SEP-JVVZVJ7BSEPPRNBS
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    // We added 2 KUBE-SEP-JVVZVJ7BSEPPRNBS rules and 1 KUBE-SVC-X27LE4BHSL4DOUIK rule.
    rulesTotal += 3;
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Sync with no new changes... This will not rewrite any SVC or SEP chains
    result = fp.syncProxyRules();
    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j KUBE-SVC-4SW47YFZTEDKD3PK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    expect(result.natRuleCountTotal).toBe(rulesTotal);

    // Now force a partial resync error and ensure that it recovers correctly: add a rule jumping
    // from svc3's service chain to svc4's endpoint, then delete svc4. The partial restore would
    // leave a dangling jump, so it fails; the proxier then does a full resync, which succeeds.
    expect(fp.needFullSync).toBe(false);
    expect(fp.ipt.chainExists('nat', 'KUBE-SEP-AYCN5HPXMIRJNJXU')).toBe(true);
    fp.ipt.ensureRule('append', 'nat', 'KUBE-SVC-X27LE4BHSL4DOUIK', ['-j', 'KUBE-SEP-AYCN5HPXMIRJNJXU']);

    fp.deleteService('ns4', 'svc4');
    fp.deleteEndpoints('ns4', 'svc4', 'p80');
    fp.syncProxyRules();
    expect(fp.lastRestoreError).toBeDefined();
    expect(fp.ipt.chainExists('nat', 'KUBE-SEP-AYCN5HPXMIRJNJXU')).toBe(true);
    expect(fp.needFullSync).toBe(true);

    // On retry we should do a full resync, which should succeed (and delete svc4)
    result = fp.syncProxyRules();
    expect(fp.lastRestoreError).toBeUndefined();
    expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FIREWALL - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :KUBE-SEP-AYCN5HPXMIRJNJXU - [0:0]
      :KUBE-SEP-DKCFIS26GWF2WLWC - [0:0]
      :KUBE-SEP-JVVZVJ7BSEPPRNBS - [0:0]
      :KUBE-SEP-SNQ3ZNILQDEJNDQO - [0:0]
      :KUBE-SVC-4SW47YFZTEDKD3PK - [0:0]
      :KUBE-SVC-X27LE4BHSL4DOUIK - [0:0]
      :KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      -A KUBE-SEP-DKCFIS26GWF2WLWC -m comment --comment ns3/svc3:p80 -s 10.0.3.2 -j KUBE-MARK-MASQ
      -A KUBE-SEP-DKCFIS26GWF2WLWC -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.3.2:80
      -A KUBE-SEP-JVVZVJ7BSEPPRNBS -m comment --comment ns3/svc3:p80 -s 10.0.3.3 -j KUBE-MARK-MASQ
      -A KUBE-SEP-JVVZVJ7BSEPPRNBS -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.3.3:80
      -A KUBE-SEP-SNQ3ZNILQDEJNDQO -m comment --comment ns1/svc1:p80 -s 10.0.1.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-SNQ3ZNILQDEJNDQO -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.0.3.2:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-DKCFIS26GWF2WLWC
      -A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.0.3.3:80" -j KUBE-SEP-JVVZVJ7BSEPPRNBS
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.0.1.1:80" -j KUBE-SEP-SNQ3ZNILQDEJNDQO
      -X KUBE-SEP-AYCN5HPXMIRJNJXU
      -X KUBE-SVC-4SW47YFZTEDKD3PK
      COMMIT
    `;
    expectRules(expected, fp.iptablesData, false);
    expect(result.natRuleCount).toBe(countRules(dedent(expected), 'nat'));
    // We deleted 1 KUBE-SERVICES rule, 2 KUBE-SVC-4SW47YFZTEDKD3PK rules, and 2 KUBE-SEP-AYCN5HPXMIRJNJXU rules
    rulesTotal -= 5;
    expect(result.natRuleCountTotal).toBe(rulesTotal);
    // svc3's chain no longer has the injected rule.
    expect(chainRules(fp.iptablesData, 'nat', 'KUBE-SVC-X27LE4BHSL4DOUIK')).not.toContain('-A KUBE-SVC-X27LE4BHSL4DOUIK -j KUBE-SEP-AYCN5HPXMIRJNJXU');
    expect(fp.ipt.chainExists('nat', 'KUBE-SEP-AYCN5HPXMIRJNJXU')).toBe(false);
  });
});

function countEndpointsAndComments(iptablesData: string, matchEndpoint: string): [string, number, number] {
  let numEndpoints = 0;
  let numComments = 0;
  let matched = '';
  for (const line of iptablesData.split('\n')) {
    if (line.startsWith('-A KUBE-SEP-') && line.includes('-j DNAT')) {
      numEndpoints++;
      if (line.includes('--comment')) numComments++;
      if (line.includes(matchEndpoint)) matched = line;
    }
  }
  return [matched, numEndpoints, numComments];
}

describe('TestSyncProxyRulesLargeClusterMode', () => {
  it('drops comments above the threshold and delays stale-chain cleanup', () => {
    const fp = new FakeProxier('IPv4', { masqueradeAll: true });
    fp.syncPeriodMs = 30_000;
    const threshold = 1000;
    for (const [ns, name, port, pname] of [
      ['ns1', 'svc1', 80, 'p80'],
      ['ns2', 'svc2', 8080, 'p8080'],
      ['ns3', 'svc3', 8081, 'p8081'],
    ] as const) {
      fp.addService(
        makeTestService(ns, name, (svc) => {
          svc.spec.type = 'ClusterIP';
          svc.spec.clusterIP = `172.30.0.4${name.slice(-1)}`;
          svc.spec.ports = [{ name: pname, port, protocol: 'TCP' }];
        }),
      );
    }
    const eps = (prefix: string) =>
      Array.from({ length: threshold / 2 - 1 }, (_, i) => ({ ip: `${prefix}.${i % 256}.${Math.floor(i / 256)}` }));
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, eps('10.0'));
    fp.setEndpoints('ns2', 'svc2', 'p8080', 8080, eps('10.1'));

    let result = fp.syncProxyRules();
    let expectedEndpoints = 2 * (threshold / 2 - 1);
    expect(result.largeClusterMode).toBe(false);
    let [first, numEndpoints, numComments] = countEndpointsAndComments(fp.iptablesData, '10.0.0.0');
    expect(first).toBe('-A KUBE-SEP-DKGQUZGBKLTPAR56 -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.0.0.0:80');
    expect(numEndpoints).toBe(expectedEndpoints);
    expect(numComments).toBe(numEndpoints);

    fp.setEndpoints('ns3', 'svc3', 'p8081', 8081, [{ ip: '203.0.113.4' }, { ip: '203.0.113.8' }, { ip: '203.0.113.12' }]);
    result = fp.syncProxyRules();
    expect(result.largeClusterMode).toBe(true);
    [first, numEndpoints, numComments] = countEndpointsAndComments(fp.iptablesData, '203.0.113.4');
    expect(first).toBe('-A KUBE-SEP-RUVVH7YV3PHQBDOS -m tcp -p tcp -j DNAT --to-destination 203.0.113.4:8081');
    // Only svc3's endpoints are written (partial sync; crossing the threshold is no reason for a full one).
    expect(numEndpoints).toBe(3);
    expect(numComments).toBe(0);

    // A full resync rewrites the older services with no comments as well.
    fp.forceSyncProxyRules();
    expectedEndpoints += 3;
    [first, numEndpoints, numComments] = countEndpointsAndComments(fp.iptablesData, '10.0.0.0');
    expect(first).toBe('-A KUBE-SEP-DKGQUZGBKLTPAR56 -m tcp -p tcp -j DNAT --to-destination 10.0.0.0:80');
    expect(numEndpoints).toBe(expectedEndpoints);
    expect(numComments).toBe(0);

    // Service deletion: create another service first, so as to stay in large cluster mode.
    fp.addService(
      makeTestService('ns4', 'svc4', (svc) => {
        svc.spec.type = 'ClusterIP';
        svc.spec.clusterIP = '172.30.0.44';
        svc.spec.ports = [{ name: 'p8082', port: 8082, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns4', 'svc4', 'p8082', 8082, [{ ip: '10.4.0.1' }]);
    fp.syncProxyRules();
    let svc4Endpoint: string;
    [svc4Endpoint, numEndpoints] = countEndpointsAndComments(fp.iptablesData, '10.4.0.1');
    expect(svc4Endpoint).toBe('-A KUBE-SEP-SU5STNODRYEWJAUF -m tcp -p tcp -j DNAT --to-destination 10.4.0.1:8082');
    expect(numEndpoints).toBe(1);

    // In large-cluster mode, a deleted service's chains are neither re-synced nor deleted immediately.
    fp.lastIPTablesCleanup = fp.now;
    fp.deleteService('ns4', 'svc4');
    fp.syncProxyRules();
    [svc4Endpoint, numEndpoints] = countEndpointsAndComments(fp.iptablesData, '10.4.0.1');
    expect(svc4Endpoint).toBe('');
    expect(numEndpoints).toBe(0);
    expect(fp.iptablesData).not.toContain('-X ');

    // But resyncing after a long-enough delay deletes the stale chains.
    fp.lastIPTablesCleanup = fp.now - fp.syncPeriodMs - 1;
    fp.syncProxyRules();
    [svc4Endpoint, numEndpoints] = countEndpointsAndComments(fp.iptablesData, '10.4.0.1');
    expect(svc4Endpoint).toBe('');
    expect(numEndpoints).toBe(0);
    expect(fp.iptablesData).toContain('-X KUBE-SVC-EBDQOQU5SJFXRIL3');
    expect(fp.iptablesData).toContain('-X KUBE-SEP-SU5STNODRYEWJAUF');

    // force a full sync and count
    fp.forceSyncProxyRules();
    [, numEndpoints] = countEndpointsAndComments(fp.iptablesData, '10.0.0.0');
    expect(numEndpoints).toBe(expectedEndpoints);
  });
});

describe('TestNoEndpointsMetric', () => {
  const cases: Array<{ name: string; itp?: 'Local'; etp?: 'Local'; endpoints: Array<[string, string]>; internal: number; external: number }> = [
    { name: 'internalTrafficPolicy is set and there are local endpoints', itp: 'Local', endpoints: [['10.0.1.1', 'test-node'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']], internal: 0, external: 0 },
    { name: 'externalTrafficPolicy is set and there are local endpoints', etp: 'Local', endpoints: [['10.0.1.1', 'test-node'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']], internal: 0, external: 0 },
    { name: 'both policies are set and there are local endpoints', itp: 'Local', etp: 'Local', endpoints: [['10.0.1.1', 'test-node'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']], internal: 0, external: 0 },
    { name: 'internalTrafficPolicy is set and there are no local endpoints', itp: 'Local', endpoints: [['10.0.1.1', 'node0'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']], internal: 1, external: 0 },
    { name: 'externalTrafficPolicy is set and there are no local endpoints', etp: 'Local', endpoints: [['10.0.1.1', 'node0'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']], internal: 0, external: 1 },
    { name: 'both policies are set and there are no local endpoints', itp: 'Local', etp: 'Local', endpoints: [['10.0.1.1', 'node0'], ['10.0.1.2', 'node1'], ['10.0.1.3', 'node2']], internal: 1, external: 1 },
    { name: 'both policies are set and there are no endpoints at all', itp: 'Local', etp: 'Local', endpoints: [], internal: 0, external: 0 },
  ];
  it.each(cases)('$name', (tc) => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.1.1';
        svc.spec.selector = { foo: 'bar' };
        svc.spec.ports = [{ name: '', port: 80, protocol: 'TCP', nodePort: 123 }];
        if (tc.itp !== undefined) svc.spec.internalTrafficPolicy = tc.itp;
        if (tc.etp !== undefined) {
          svc.spec.type = 'NodePort';
          svc.spec.externalTrafficPolicy = tc.etp;
        }
      }),
    );
    fp.setEndpoints('ns1', 'svc1', '', 80, tc.endpoints.map(([ip, nodeName]) => ({ ip, nodeName, ready: true })));
    const result = fp.syncProxyRules();
    expect(result.noLocalEndpoints).toEqual({ internal: tc.internal, external: tc.external });
  });
});
