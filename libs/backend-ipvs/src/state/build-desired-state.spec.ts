import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { defaultOptions, makeService, nonEmptySets, serverSummary, setEntries, TestCluster } from '../testing/ipvs-fixtures.js';
import { buildDesiredIpvsState } from './build-desired-state.js';

// Vectors from upstream pkg/proxy/ipvs/proxier_test.go where they fit: svcIP 10.20.30.41, port 80,
// nodePort 3001, node IP 100.101.102.103, endpoint 10.180.0.1:80 (TestNodePortIPv4,
// TestLoadBalancer, TestOnlyLocalNodePorts, TestLoadBalancerSourceRanges, TestSessionAffinity).
const SVC_IP = '10.20.30.41';

const LB_STATUS = { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } };

function nodePortService(fn: (spec: Record<string, unknown>) => void = () => undefined, status: object = {}) {
  return makeService('ns1', 'svc1', (svc) => {
    svc.spec.type = 'NodePort';
    svc.spec.clusterIP = SVC_IP;
    svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
    fn(svc.spec as Record<string, unknown>);
    Object.assign(svc.status, status);
  });
}

describe('buildDesiredIpvsState', () => {
  it('gives a ClusterIP service one rr virtual server with its endpoints, binds the cluster IP and lists it in KUBE-CLUSTER-IP', () => {
    const c = new TestCluster();
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.clusterIP = SVC_IP;
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
    }));
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.2', port: 8080 }, { ip: '10.180.0.1', port: 8080 }]);
    const state = c.state();
    expect(serverSummary(state)).toEqual(['10.20.30.41:80/TCP rr -> 10.180.0.1:8080,10.180.0.2:8080']);
    expect(state.virtualServers[0].realServers[0]).toEqual({ address: '10.180.0.1', port: 8080, weight: 1, key: '10.180.0.1:8080' });
    expect(state.bindAddresses).toEqual([SVC_IP]);
    expect(nonEmptySets(state)).toEqual({ 'KUBE-CLUSTER-IP': ['10.20.30.41,tcp:80'], 'KUBE-IPVS-IPS': [SVC_IP] });
  });

  it('gives a NodePort service a virtual server per node IP, never bound, and the port in KUBE-NODE-PORT-TCP (TestNodePortIPv4)', () => {
    const c = new TestCluster();
    c.service(nodePortService());
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.1', port: 80 }]);
    const state = c.state();
    expect(serverSummary(state)).toEqual(['10.20.30.41:80/TCP rr -> 10.180.0.1:80', '100.101.102.103:3001/TCP rr -> 10.180.0.1:80']);
    expect(state.bindAddresses).toEqual([SVC_IP]);
    expect(setEntries(state, 'KUBE-NODE-PORT-TCP')).toEqual(['3001']);
    expect(setEntries(state, 'KUBE-NODE-PORT-LOCAL-TCP')).toEqual([]);
  });

  it('serves node ports only on the selected --nodeport-addresses and never on loopback', () => {
    const c = new TestCluster();
    c.service(nodePortService());
    const picked = c.state({ nodePortAddresses: { all: false, ips: ['127.0.0.1', '192.168.7.7', '2001:db8::9'] } });
    expect(serverSummary(picked).map((l) => l.split(' ')[0])).toEqual(['10.20.30.41:80/TCP', '192.168.7.7:3001/TCP']);
    const none = c.state({ nodePortAddresses: { all: false, ips: ['127.0.0.1'] } });
    expect(none.virtualServers.map((v) => v.key)).toEqual(['10.20.30.41:80/TCP']);
    expect(setEntries(none, 'KUBE-NODE-PORT-TCP')).toEqual([]);
  });

  it('programs load-balancer IPs as bound virtual servers in KUBE-LOAD-BALANCER (TestLoadBalancer)', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.type = 'LoadBalancer';
    }, LB_STATUS));
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.1', port: 80 }]);
    const state = c.state();
    expect(state.virtualServers.map((v) => v.key)).toEqual(['1.2.3.4:80/TCP', '10.20.30.41:80/TCP', '100.101.102.103:3001/TCP']);
    expect(state.bindAddresses).toEqual(['1.2.3.4', SVC_IP]);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER')).toEqual(['1.2.3.4,tcp:80']);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-LOCAL')).toEqual([]);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-FW')).toEqual([]);
  });

  it('writes a single-address source range as the bare address, as ipset save prints it (no diff on every sync)', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.type = 'LoadBalancer';
      spec.loadBalancerSourceRanges = ['192.0.2.7/32'];
    }, LB_STATUS));
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.1', port: 80 }]);
    expect(setEntries(c.state(), 'KUBE-LOAD-BALANCER-SOURCE-CIDR')).toEqual(['1.2.3.4,tcp:80,192.0.2.7']);
  });

  it('fills the firewall sets from loadBalancerSourceRanges, with the LB IP as source when the node is in a range (TestLoadBalancerSourceRanges)', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.type = 'LoadBalancer';
      spec.loadBalancerSourceRanges = ['10.0.0.0/8', '100.101.0.0/16'];
    }, LB_STATUS));
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.1', port: 80 }]);
    const state = c.state();
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-FW')).toEqual(['1.2.3.4,tcp:80']);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-SOURCE-CIDR')).toEqual(['1.2.3.4,tcp:80,10.0.0.0/8', '1.2.3.4,tcp:80,100.101.0.0/16']);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-SOURCE-IP')).toEqual(['1.2.3.4,tcp:80,1.2.3.4']);
    expect(setEntries(c.state({ nodeIP: '192.168.0.9' }), 'KUBE-LOAD-BALANCER-SOURCE-IP')).toEqual([]);
  });

  it('binds external IPs and lists them in KUBE-EXTERNAL-IP, or only in KUBE-EXTERNAL-IP-LOCAL under the Local policy', () => {
    const c = new TestCluster();
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.clusterIP = SVC_IP;
      svc.spec.externalIPs = ['50.60.70.81', '2012::51'];
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
    }));
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.1', port: 80 }]);
    const cluster = c.state();
    expect(cluster.bindAddresses).toEqual([SVC_IP, '50.60.70.81']);
    expect(serverSummary(cluster)).toContain('50.60.70.81:80/TCP rr -> 10.180.0.1:80');
    expect(setEntries(cluster, 'KUBE-EXTERNAL-IP')).toEqual(['50.60.70.81,tcp:80']);
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.clusterIP = SVC_IP;
      svc.spec.externalIPs = ['50.60.70.81'];
      svc.spec.externalTrafficPolicy = 'Local';
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
    }));
    const local = c.state();
    expect(setEntries(local, 'KUBE-EXTERNAL-IP')).toEqual([]);
    expect(setEntries(local, 'KUBE-EXTERNAL-IP-LOCAL')).toEqual(['50.60.70.81,tcp:80']);
  });

  it("does not bind an external or load-balancer IP that is one of the node's own addresses, but still serves it", () => {
    const c = new TestCluster();
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.type = 'LoadBalancer';
      svc.spec.clusterIP = SVC_IP;
      svc.spec.externalIPs = ['100.101.102.103'];
      svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP' }];
      svc.status.loadBalancer = { ingress: [{ ip: '100.101.102.104' }] };
    }));
    const state = c.state({ localAddresses: ['100.101.102.103', '100.101.102.104'] });
    expect(state.bindAddresses).toEqual([SVC_IP]);
    expect(state.virtualServers.map((v) => v.key)).toEqual(['10.20.30.41:80/TCP', '100.101.102.103:80/TCP', '100.101.102.104:80/TCP']);
    expect(setEntries(state, 'KUBE-IPVS-IPS')).toEqual([SVC_IP]);
  });

  it('fills the firewall sets of a load balancer without endpoints too, as upstream', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.type = 'LoadBalancer';
      spec.loadBalancerSourceRanges = ['10.0.0.0/8'];
    }, LB_STATUS));
    const state = c.state();
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-FW')).toEqual(['1.2.3.4,tcp:80']);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-SOURCE-CIDR')).toEqual(['1.2.3.4,tcp:80,10.0.0.0/8']);
    expect(setEntries(state, 'KUBE-LOAD-BALANCER-SOURCE-IP')).toEqual([]);
  });

  it('skips IPv6 link-local node addresses for node ports', () => {
    const c = new TestCluster('IPv6');
    c.service(makeService('ns1', 'v6', (svc) => {
      svc.spec.type = 'NodePort';
      svc.spec.clusterIP = 'fd00:10:96::41';
      svc.spec.clusterIPs = ['fd00:10:96::41'];
      svc.spec.ipFamilies = ['IPv6'];
      svc.spec.ports = [{ port: 80, protocol: 'TCP', nodePort: 3001 }];
    }));
    const state = c.state({ localAddresses: ['fe80::1', '2001:db8::7', '::1', '10.0.0.1'] });
    expect(state.virtualServers.map((v) => v.key)).toEqual(['[2001:db8::7]:3001/TCP', '[fd00:10:96::41]:80/TCP']);
  });

  it('makes ClientIP affinity a persistence timeout on every virtual server of the port (TestSessionAffinity: 10800 s default)', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.sessionAffinity = 'ClientIP';
    }));
    expect(c.state().virtualServers.map((v) => v.persistenceTimeout)).toEqual([10800, 10800]);
    c.service(nodePortService((spec) => {
      spec.sessionAffinity = 'ClientIP';
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 60 } };
    }));
    expect(c.state().virtualServers.map((v) => v.persistenceTimeout)).toEqual([60, 60]);
  });

  it('sends Local-policy external traffic to local endpoints only, and still balances the cluster IP over all (TestOnlyLocalNodePorts)', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.externalTrafficPolicy = 'Local';
    }));
    c.endpoints('ns1/svc1:p80', [{ ip: '10.180.0.1', port: 80, nodeName: 'other' }, { ip: '10.180.2.1', port: 80, nodeName: 'test-hostname' }]);
    const state = c.state();
    expect(serverSummary(state)).toEqual([
      '10.20.30.41:80/TCP rr -> 10.180.0.1:80,10.180.2.1:80',
      '100.101.102.103:3001/TCP rr -> 10.180.2.1:80',
    ]);
    expect(setEntries(state, 'KUBE-NODE-PORT-TCP')).toEqual(['3001']);
    expect(setEntries(state, 'KUBE-NODE-PORT-LOCAL-TCP')).toEqual(['3001']);
    expect(setEntries(state, 'KUBE-LOOP-BACK')).toEqual(['10.180.2.1,tcp:80,10.180.2.1']);
  });

  it('keeps the virtual servers of a port without endpoints, with no real servers', () => {
    const c = new TestCluster();
    c.service(nodePortService());
    const state = c.state();
    expect(serverSummary(state)).toEqual(['10.20.30.41:80/TCP rr -> ', '100.101.102.103:3001/TCP rr -> ']);
    expect(setEntries(state, 'KUBE-CLUSTER-IP')).toEqual(['10.20.30.41,tcp:80']);
  });

  it('programs only its own family of a dual-stack service, into the KUBE-6- sets for IPv6', () => {
    const svc = makeService('ns1', 'dual', (s) => {
      s.spec.type = 'NodePort';
      s.spec.clusterIP = SVC_IP;
      s.spec.clusterIPs = [SVC_IP, 'fd00:10:96::41'];
      s.spec.ipFamilies = ['IPv4', 'IPv6'];
      s.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
    });
    const v4 = new TestCluster('IPv4');
    v4.service(svc);
    const v6 = new TestCluster('IPv6');
    v6.service(svc);
    v6.endpoints('ns1/dual:p80', [{ ip: 'fd00:10:244::5', port: 8080, nodeName: 'test-hostname' }]);
    // A port of the other family in the map is skipped, not programmed.
    const mixed = buildDesiredIpvsState(v4.serviceMap, new Map(), defaultOptions('IPv6'));
    expect(mixed.virtualServers).toEqual([]);
    const state = v6.state();
    expect(serverSummary(state)).toEqual(['[2001:db8::1:1]:3001/TCP rr -> [fd00:10:244::5]:8080', '[fd00:10:96::41]:80/TCP rr -> [fd00:10:244::5]:8080']);
    expect(state.bindAddresses).toEqual(['fd00:10:96::41']);
    expect(nonEmptySets(state)).toEqual({
      'KUBE-6-LOOP-BACK': ['fd00:10:244::5,tcp:8080,fd00:10:244::5'],
      'KUBE-6-CLUSTER-IP': ['fd00:10:96::41,tcp:80'],
      'KUBE-6-NODE-PORT-TCP': ['3001'],
      'KUBE-6-IPVS-IPS': ['fd00:10:96::41'],
    });
    expect(v4.state().virtualServers.map((v) => v.key)).toEqual(['10.20.30.41:80/TCP', '100.101.102.103:3001/TCP']);
  });

  it('lists SCTP node ports per node IP in the hash sets and UDP node ports in the UDP bitmap', () => {
    const c = new TestCluster();
    c.service(makeService('ns1', 'mixed', (svc) => {
      svc.spec.type = 'NodePort';
      svc.spec.clusterIP = SVC_IP;
      svc.spec.externalTrafficPolicy = 'Local';
      svc.spec.ports = [
        { name: 'sctp', port: 7777, protocol: 'SCTP', nodePort: 3003 },
        { name: 'udp', port: 53, protocol: 'UDP', nodePort: 3002 },
      ];
    }));
    const state = c.state({ localAddresses: ['100.101.102.103', '10.0.0.7'] });
    expect(state.virtualServers.map((v) => v.key)).toEqual([
      '10.0.0.7:3002/UDP',
      '10.0.0.7:3003/SCTP',
      '10.20.30.41:53/UDP',
      '10.20.30.41:7777/SCTP',
      '100.101.102.103:3002/UDP',
      '100.101.102.103:3003/SCTP',
    ]);
    expect(setEntries(state, 'KUBE-NODE-PORT-SCTP-HASH')).toEqual(['10.0.0.7,sctp:3003', '100.101.102.103,sctp:3003']);
    expect(setEntries(state, 'KUBE-NODE-PORT-LOCAL-SCTP-HASH')).toEqual(['10.0.0.7,sctp:3003', '100.101.102.103,sctp:3003']);
    expect(setEntries(state, 'KUBE-NODE-PORT-UDP')).toEqual(['3002']);
    expect(setEntries(state, 'KUBE-NODE-PORT-LOCAL-UDP')).toEqual(['3002']);
    expect(setEntries(state, 'KUBE-CLUSTER-IP')).toEqual(['10.20.30.41,sctp:7777', '10.20.30.41,udp:53']);
  });

  it('lists the health-check node port of a Local load balancer in KUBE-HEALTH-CHECK-NODE-PORT', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.type = 'LoadBalancer';
      spec.externalTrafficPolicy = 'Local';
      spec.healthCheckNodePort = 32000;
    }));
    expect(setEntries(c.state(), 'KUBE-HEALTH-CHECK-NODE-PORT')).toEqual(['32000']);
  });

  it('lists the health-check node port even when no node IP is selected for the node port (README, difference 4)', () => {
    const c = new TestCluster();
    c.service(nodePortService((spec) => {
      spec.type = 'LoadBalancer';
      spec.externalTrafficPolicy = 'Local';
      spec.healthCheckNodePort = 32000;
    }));
    const none = c.state({ nodePortAddresses: { all: false, ips: ['127.0.0.1'] } });
    expect(setEntries(none, 'KUBE-NODE-PORT-TCP')).toEqual([]);
    expect(setEntries(none, 'KUBE-HEALTH-CHECK-NODE-PORT')).toEqual(['32000']);
  });

  it('uses --ipvs-scheduler, adding the mh-port flag for mh as upstream sets FlagSourceHash', () => {
    const c = new TestCluster();
    c.service(nodePortService());
    expect(c.state({ scheduler: 'wlc' }).virtualServers.every((v) => v.scheduler === 'wlc' && v.flags.length === 0)).toBe(true);
    expect(c.state({ scheduler: '' }).virtualServers[0].scheduler).toBe('rr');
    expect(c.state({ scheduler: 'mh' }).virtualServers.every((v) => v.flags.join() === 'mh-port')).toBe(true);
    expect(() => c.state({ scheduler: 'rr -p 1' })).toThrow(UnsafeRestoreTextError);
  });

  it('lets the first service port by name win a virtual server two ports claim', () => {
    const c = new TestCluster();
    for (const [name, ep] of [['b', '10.180.0.2'], ['a', '10.180.0.1']] as const) {
      c.service(makeService('ns1', name, (svc) => {
        svc.spec.clusterIP = name === 'a' ? '10.20.30.1' : '10.20.30.2';
        svc.spec.externalIPs = ['50.60.70.81'];
        svc.spec.ports = [{ port: 80, protocol: 'TCP' }];
      }));
      c.endpoints(`ns1/${name}`, [{ ip: ep, port: 80 }]);
    }
    expect(serverSummary(c.state())).toContain('50.60.70.81:80/TCP rr -> 10.180.0.1:80');
  });
});
