/**
 * Options of the renderer: upstream's TestDropInvalidRule and TestMasqueradeRule (expected chain
 * texts from proxier_test.go), and rule texts for the local-traffic detectors, IPv6 and the
 * masquerade mark, written from upstream's syncProxyRules / localdetector.go.
 */
import type { RenderOptions } from './render-ruleset.js';
import { renderRuleset } from './render-ruleset.js';
import { ChainNameCache } from './chain-names.js';
import { chainRules, dedent, rulesForComparison } from './testing/assertions.js';
import { fakeProxierOptions, FakeProxier, makeTestService } from './testing/fake-proxier.js';
import { TEST_NODE_NAME } from './testing/packet-tracer.js';

describe('TestDropInvalidRule', () => {
  const kubeForwardChainRules = dedent(`
    -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
    -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
  `);
  it.each([
    { nfacctEnsured: false, tcpLiberal: false, dropRule: '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n' },
    { nfacctEnsured: true, tcpLiberal: false, dropRule: '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP\n' },
    { nfacctEnsured: false, tcpLiberal: true, dropRule: '' },
  ])('tcpLiberal is $tcpLiberal and nfacctEnsured is $nfacctEnsured', (tc) => {
    const fp = new FakeProxier('IPv4', {
      conntrackTCPLiberal: tc.tcpLiberal,
      nfacct: { ctStateInvalidDropped: tc.nfacctEnsured, localhostNodePortAccepted: false },
    });
    fp.syncProxyRules();
    expect(chainRules(fp.iptablesData, 'filter', 'KUBE-FORWARD')).toBe(tc.dropRule + kubeForwardChainRules);
  });
});

describe('TestMasqueradeRule', () => {
  it.each([false, true])('randomFully %s', (randomFully) => {
    const fp = new FakeProxier('IPv4', { randomFully });
    fp.syncProxyRules();
    const expected = dedent(`
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE${randomFully ? ' --random-fully' : ''}
    `);
    expect(chainRules(fp.iptablesData, 'nat', 'KUBE-POSTROUTING')).toBe(expected);
  });
});

describe('masquerade mark', () => {
  it("defaults to upstream NewProxier's %#08x formatting of 1<<masqueradeBit", () => {
    const opts: RenderOptions = { ...fakeProxierOptions() };
    delete opts.masqueradeMark;
    const r = renderRuleset(
      { serviceMap: new Map(), endpointsMap: new Map(), changedServices: null, existingNatChains: null },
      { ...opts, masqueradeBit: 14 },
      new ChainNameCache(),
    );
    expect(chainRules(r.payload, 'nat', 'KUBE-POSTROUTING')).toContain('-m mark ! --mark 0x00004000/0x00004000 -j RETURN');
    expect(chainRules(r.payload, 'nat', 'KUBE-MARK-MASQ')).toBe('-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000\n');
    expect(chainRules(r.payload, 'filter', 'KUBE-FORWARD')).toContain('-m mark --mark 0x00004000/0x00004000 -j ACCEPT');

    const r15 = renderRuleset(
      { serviceMap: new Map(), endpointsMap: new Map(), changedServices: null, existingNatChains: null },
      { ...opts, masqueradeBit: 15 },
      new ChainNameCache(),
    );
    expect(chainRules(r15.payload, 'nat', 'KUBE-MARK-MASQ')).toBe('-A KUBE-MARK-MASQ -j MARK --or-mark 0x00008000\n');
  });

  it('renders an empty state exactly as upstream (no services)', () => {
    const opts: RenderOptions = fakeProxierOptions('IPv4', { nfacct: { ctStateInvalidDropped: false, localhostNodePortAccepted: false } });
    const r = renderRuleset({ serviceMap: new Map(), endpointsMap: new Map(), changedServices: null, existingNatChains: null }, opts, new ChainNameCache());
    expect(r.payload).toBe(
      dedent(`
        *filter
        :KUBE-SERVICES - [0:0]
        :KUBE-EXTERNAL-SERVICES - [0:0]
        :KUBE-FORWARD - [0:0]
        :KUBE-NODEPORTS - [0:0]
        :KUBE-PROXY-FIREWALL - [0:0]
        :KUBE-FIREWALL - [0:0]
        -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
        -A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
        -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
        -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
        COMMIT
        *nat
        :KUBE-SERVICES - [0:0]
        :KUBE-NODEPORTS - [0:0]
        :KUBE-POSTROUTING - [0:0]
        :KUBE-MARK-MASQ - [0:0]
        -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
        -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
        -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
        -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
        -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
        COMMIT
      `),
    );
    expect(r.filterRuleCount).toBe(4);
    expect(r.natRuleCount).toBe(5);
    expect(r.natChainCount).toBe(4);
  });
});

/** A cluster-IP service and an eTP:Local LoadBalancer, to see both uses of the local detector. */
function detectorScenario(localDetector: RenderOptions['localDetector'], masqueradeAll = false): FakeProxier {
  const fp = new FakeProxier('IPv4', { localDetector, masqueradeAll });
  fp.addService(
    makeTestService('ns1', 'svc1', (svc) => {
      svc.spec.type = 'LoadBalancer';
      svc.spec.externalTrafficPolicy = 'Local';
      svc.spec.clusterIP = '172.30.0.41';
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
      svc.spec.healthCheckNodePort = 30000;
      svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
    }),
  );
  fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1', nodeName: TEST_NODE_NAME }]);
  fp.syncProxyRules();
  return fp;
}

describe('detect-local modes (upstream localdetector.go args in syncProxyRules rules)', () => {
  const SVC = 'KUBE-SVC-XPGD46QRK7WJZT7O';
  const EXT = 'KUBE-EXT-XPGD46QRK7WJZT7O';
  const SVL = 'KUBE-SVL-XPGD46QRK7WJZT7O';
  const SEP = 'KUBE-SEP-SXIVWICOYRO3J4NJ';
  const svcRules = (notLocal: string | null) =>
    (notLocal === null
      ? ''
      : `-A ${SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ${notLocal}-j KUBE-MARK-MASQ\n`) +
    `-A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j ${SEP}\n`;
  const extRules = (local: string | null) =>
    (local === null ? '' : `-A ${EXT} -m comment --comment "pod traffic for ns1/svc1:p80 external destinations" ${local} -j ${SVC}\n`) +
    `-A ${EXT} -m comment --comment "masquerade LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ\n` +
    `-A ${EXT} -m comment --comment "route LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j ${SVC}\n` +
    `-A ${EXT} -j ${SVL}\n`;

  it('cidr', () => {
    const fp = detectorScenario({ kind: 'cidr', cidr: '10.0.0.0/8' });
    expect(chainRules(fp.iptablesData, 'nat', SVC)).toBe(svcRules('! -s 10.0.0.0/8 '));
    expect(chainRules(fp.iptablesData, 'nat', EXT)).toBe(extRules('-s 10.0.0.0/8'));
  });

  it('bridge-interface', () => {
    const fp = detectorScenario({ kind: 'bridge-interface', interfaceName: 'cbr0' });
    expect(chainRules(fp.iptablesData, 'nat', SVC)).toBe(svcRules('! -i cbr0 '));
    expect(chainRules(fp.iptablesData, 'nat', EXT)).toBe(extRules('-i cbr0'));
  });

  it('interface-name-prefix', () => {
    const fp = detectorScenario({ kind: 'interface-name-prefix', prefix: 'veth' });
    expect(chainRules(fp.iptablesData, 'nat', SVC)).toBe(svcRules('! -i veth+ '));
    expect(chainRules(fp.iptablesData, 'nat', EXT)).toBe(extRules('-i veth+'));
  });

  it('none: the rules that need a detector are skipped', () => {
    const fp = detectorScenario({ kind: 'none' });
    expect(chainRules(fp.iptablesData, 'nat', SVC)).toBe(svcRules(null));
    expect(chainRules(fp.iptablesData, 'nat', EXT)).toBe(extRules(null));
  });

  it('masqueradeAll: masquerade all cluster-IP traffic, detector or not', () => {
    for (const detector of [{ kind: 'cidr', cidr: '10.0.0.0/8' } as const, { kind: 'none' } as const]) {
      const fp = detectorScenario(detector, true);
      expect(chainRules(fp.iptablesData, 'nat', SVC)).toBe(svcRules(''));
    }
  });
});

describe('IPv6', () => {
  it('writes ip6tables rules as upstream (no KUBE-FIREWALL, no localhost nodeports, ! -d ::1/128)', () => {
    const fp = new FakeProxier('IPv6', { nodeIP: '2001:db8::1' });
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'NodePort';
        svc.spec.clusterIP = 'fd00:172:30::41';
        svc.spec.ipFamilies = ['IPv6'];
        svc.spec.clusterIPs = ['fd00:172:30::41'];
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: 'fd00:10:180::1' }, { ip: 'fd00:10:180::2:1', nodeName: TEST_NODE_NAME }]);
    fp.syncProxyRules();
    expect(fp.lastRestoreError).toBeUndefined();
    const SVC = 'KUBE-SVC-XPGD46QRK7WJZT7O';
    const EXT = 'KUBE-EXT-XPGD46QRK7WJZT7O';
    const sep1 = fp.names.sep('ns1/svc1:p80', 'TCP', '[fd00:10:180::1]:80');
    const sep2 = fp.names.sep('ns1/svc1:p80', 'TCP', '[fd00:10:180::2:1]:80');
    const expected = `
      *filter
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :KUBE-EXTERNAL-SERVICES - [0:0]
      :KUBE-FORWARD - [0:0]
      :KUBE-PROXY-FIREWALL - [0:0]
      -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
      -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
      COMMIT
      *nat
      :KUBE-NODEPORTS - [0:0]
      :KUBE-SERVICES - [0:0]
      :${EXT} - [0:0]
      :KUBE-MARK-MASQ - [0:0]
      :KUBE-POSTROUTING - [0:0]
      :${[sep1, sep2].sort()[0]} - [0:0]
      :${[sep1, sep2].sort()[1]} - [0:0]
      :${SVC} - [0:0]
      -A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 3001 -j ${EXT}
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:172:30::41 --dport 80 -j ${SVC}
      -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS
      -A ${EXT} -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ
      -A ${EXT} -j ${SVC}
      -A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
      -A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
      -A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
      -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
      ${[
        `-A ${sep1} -m comment --comment ns1/svc1:p80 -s fd00:10:180::1 -j KUBE-MARK-MASQ\n      -A ${sep1} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination [fd00:10:180::1]:80`,
        `-A ${sep2} -m comment --comment ns1/svc1:p80 -s fd00:10:180::2:1 -j KUBE-MARK-MASQ\n      -A ${sep2} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination [fd00:10:180::2:1]:80`,
      ]
        .sort()
        .join('\n      ')}
      -A ${SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:172:30::41 --dport 80 ! -s fd00:10::/64 -j KUBE-MARK-MASQ
      -A ${SVC} -m comment --comment "ns1/svc1:p80 -> [fd00:10:180::1]:80" -m statistic --mode random --probability 0.5000000000 -j ${sep1}
      -A ${SVC} -m comment --comment "ns1/svc1:p80 -> [fd00:10:180::2:1]:80" -j ${sep2}
      COMMIT
    `;
    const r = rulesForComparison(expected, fp.iptablesData);
    expect(r.actual).toBe(r.expected);
    expect(r.consistency).toBeNull();
  });
});

describe('partial sync bookkeeping', () => {
  it('keeps unchanged services active (not rewritten, not deleted) and reports them', () => {
    const fp = new FakeProxier();
    for (const i of [1, 2]) {
      fp.addService(
        makeTestService(`ns${i}`, `svc${i}`, (svc) => {
          svc.spec.clusterIP = `172.30.0.4${i}`;
          svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
        }),
      );
      fp.setEndpoints(`ns${i}`, `svc${i}`, 'p80', 80, [{ ip: `10.0.${i}.1` }]);
    }
    const full = fp.syncProxyRules();
    fp.setEndpoints('ns2', 'svc2', 'p80', 80, [{ ip: '10.0.2.2' }]);
    const partial = fp.syncProxyRules();
    // svc1's chains are still active although not in the payload.
    expect(partial.activeNatChains.has('KUBE-SVC-XPGD46QRK7WJZT7O')).toBe(true);
    expect(partial.activeNatChains.has('KUBE-SEP-SNQ3ZNILQDEJNDQO')).toBe(true);
    expect(fp.iptablesData).not.toContain(':KUBE-SVC-XPGD46QRK7WJZT7O');
    expect(fp.iptablesData).not.toContain('-X KUBE-SVC-XPGD46QRK7WJZT7O');
    expect(partial.staleChainsDeleted).toBe(1); // svc2's old endpoint chain
    expect(partial.natRuleCountTotal).toBe(full.natRuleCountTotal);
    expect(partial.natRuleCount).toBeLessThan(full.natRuleCount);
    // The kernel (fake) still has svc1's rules.
    expect(fp.ipt.chainExists('nat', 'KUBE-SEP-SNQ3ZNILQDEJNDQO')).toBe(true);
  });
});

describe('payload views', () => {
  const input = () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }]);
    return fp;
  };

  it('payload, payloadBytes and payloadChunks hold the same text', () => {
    const fp = input();
    const names = new ChainNameCache();
    const r = renderRuleset({ serviceMap: fp.serviceMap, endpointsMap: fp.endpointsMap, changedServices: null, existingNatChains: null }, fp.options, names);
    const text = r.payload;
    expect(r.payloadBytes.toString('latin1')).toBe(text);
    expect(Buffer.concat([...r.payloadChunks]).toString('latin1')).toBe(text);
    expect(r.payloadLength).toBe(text.length);
    expect(text.startsWith('*filter\n')).toBe(true);
    expect(text.endsWith('COMMIT\n')).toBe(true);
  });

  it('refuses to read views of a result whose buffers a later render reused; a string already read stays valid', () => {
    const fp = input();
    const names = new ChainNameCache();
    const args = [{ serviceMap: fp.serviceMap, endpointsMap: fp.endpointsMap, changedServices: null, existingNatChains: null }, fp.options, names] as const;
    const r1 = renderRuleset(...args);
    const text1 = r1.payload;
    const r2 = renderRuleset(...args);
    expect(() => r1.payloadBytes).toThrow(/reused its buffers/);
    expect(() => r1.payloadChunks).toThrow(/reused its buffers/);
    expect(r1.payload).toBe(text1);
    expect(r2.payload).toBe(text1);
    const r3 = renderRuleset(...args);
    expect(() => r2.payloadChunks).toThrow();
    void r3;
  });

  it('keeps many services across chunk boundaries intact', () => {
    const fp = new FakeProxier();
    for (let i = 0; i < 3000; i++) {
      fp.addService(
        makeTestService(`ns${i % 7}`, `svc${i}`, (svc) => {
          svc.spec.clusterIP = `172.30.${i >> 8}.${i & 255}`;
          svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
        }),
      );
      fp.setEndpoints(`ns${i % 7}`, `svc${i}`, 'p80', 80, [{ ip: `10.1.${i >> 8}.${i & 255}` }, { ip: `10.2.${i >> 8}.${i & 255}` }]);
    }
    const names = new ChainNameCache();
    const r = renderRuleset({ serviceMap: fp.serviceMap, endpointsMap: fp.endpointsMap, changedServices: null, existingNatChains: null }, fp.options, names);
    const text = r.payload;
    expect(r.payloadChunks.length).toBeGreaterThan(4);
    const lines = text.split('\n');
    // Every line is whole: a chain line, a rule, a table header or COMMIT.
    expect(lines.filter((l) => l !== '' && !/^(\*filter|\*nat|COMMIT|:[A-Z0-9-]+ - \[0:0\]|-A [A-Z0-9-]+ .*|-X [A-Z0-9-]+)$/.test(l))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('-A KUBE-SEP-') && l.includes('-j DNAT'))).toHaveLength(6000);
    expect(r.natRuleCount).toBe(lines.filter((l) => l.startsWith('-A ')).length - r.filterRuleCount);
  });
});

describe('partial sync counts', () => {
  it.each([{ kind: 'cidr', cidr: '10.0.0.0/8' } as const, { kind: 'none' } as const])(
    'a partial sync that rewrites nothing counts exactly the lines a full sync writes (detector %j)',
    (localDetector) => {
      const fp = new FakeProxier('IPv4', { localDetector });
      const mk = (i: number, fn: Parameters<typeof makeTestService>[2]) => fp.addService(makeTestService(`ns${i}`, `svc${i}`, fn));
      mk(1, (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.clusterIP = '172.30.0.41';
        s.spec.externalIPs = ['192.168.99.11'];
        s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }, { ip: '5.6.7.8' }] };
        s.spec.loadBalancerSourceRanges = ['192.168.0.0/24', '203.0.113.0/25'];
        s.spec.sessionAffinity = 'ClientIP';
      });
      mk(2, (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.externalTrafficPolicy = 'Local';
        s.spec.healthCheckNodePort = 30000;
        s.spec.clusterIP = '172.30.0.42';
        s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }];
        s.status.loadBalancer = { ingress: [{ ip: '1.2.3.5' }] };
      });
      mk(3, (s) => {
        s.spec.type = 'NodePort';
        s.spec.externalTrafficPolicy = 'Local';
        s.spec.healthCheckNodePort = 30001;
        s.spec.clusterIP = '172.30.0.43';
        s.spec.ports = [{ name: 'p80', port: 80, protocol: 'UDP', nodePort: 3003 }];
      });
      mk(4, (s) => {
        s.spec.clusterIP = '172.30.0.44';
        s.spec.internalTrafficPolicy = 'Local';
        s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      });
      mk(5, (s) => {
        s.spec.clusterIP = '172.30.0.45';
        s.spec.ports = [{ name: 'p80', port: 80, protocol: 'SCTP' }];
      });
      fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.1.0.1', nodeName: TEST_NODE_NAME }, { ip: '10.1.0.2' }, { ip: '10.1.0.3' }]);
      fp.setEndpoints('ns2', 'svc2', 'p80', 80, [{ ip: '10.2.0.1', nodeName: TEST_NODE_NAME }, { ip: '10.2.0.2' }]);
      fp.setEndpoints('ns3', 'svc3', 'p80', 80, [{ ip: '10.3.0.2' }]);
      fp.setEndpoints('ns4', 'svc4', 'p80', 80, [{ ip: '10.4.0.1', nodeName: TEST_NODE_NAME }, { ip: '10.4.0.2' }]);
      fp.setEndpoints('ns5', 'svc5', 'p80', 80, [{ ip: '10.5.0.1' }]);
      const full = fp.syncProxyRules();
      const fullNat = full.natRuleCount;
      const fullChains = full.natChainCount;
      const partial = fp.syncProxyRules();
      expect(partial.natRuleCountTotal).toBe(fullNat);
      expect(partial.natChainCount + partial.skippedNatChainCount).toBe(fullChains);
      expect([...partial.activeNatChains].sort()).toEqual([...full.activeNatChains].sort());
      expect(partial.staleChainsDeleted).toBe(0);
    },
  );
});

describe('session affinity (ClientIP)', () => {
  it('writes the recent-match rules before the load-balancing rules, and --set in the SEP chains', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
        svc.spec.sessionAffinity = 'ClientIP';
        svc.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 100 } };
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }, { ip: '10.180.0.2' }]);
    fp.syncProxyRules();
    const SVC = 'KUBE-SVC-XPGD46QRK7WJZT7O';
    const sep1 = fp.names.sep('ns1/svc1:p80', 'TCP', '10.180.0.1:80');
    const sep2 = fp.names.sep('ns1/svc1:p80', 'TCP', '10.180.0.2:80');
    expect(chainRules(fp.iptablesData, 'nat', SVC)).toBe(
      dedent(`
        -A ${SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
        -A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m recent --name ${sep1} --rcheck --seconds 100 --reap -j ${sep1}
        -A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -m recent --name ${sep2} --rcheck --seconds 100 --reap -j ${sep2}
        -A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j ${sep1}
        -A ${SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -j ${sep2}
      `),
    );
    expect(chainRules(fp.iptablesData, 'nat', sep2)).toBe(
      dedent(`
        -A ${sep2} -m comment --comment ns1/svc1:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ
        -A ${sep2} -m comment --comment ns1/svc1:p80 -m recent --name ${sep2} --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
      `),
    );
  });
});
