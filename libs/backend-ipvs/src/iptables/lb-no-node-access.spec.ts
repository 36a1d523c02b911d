import { makeService, TestCluster } from '../testing/ipvs-fixtures.js';
import { IpsetView } from './ipset-view.js';
import { lbNoNodeAccessEntries } from './lb-no-node-access.js';

// Upstream's lbNoNodeAccessIPPortProtocolEntries: LB IP:port:protocol with source ranges that leave out the node IP.
describe('lbNoNodeAccessEntries', () => {
  function state(nodeIP: string | null) {
    const c = new TestCluster();
    c.service(makeService('ns1', 'svc1', (svc) => {
      svc.spec.type = 'LoadBalancer';
      svc.spec.clusterIP = '10.20.30.41';
      svc.spec.loadBalancerSourceRanges = ['10.0.0.0/8'];
      svc.spec.ports = [
        { name: 'web', port: 80, protocol: 'TCP', nodePort: 3001 },
        { name: 'dns', port: 53, protocol: 'UDP', nodePort: 3002 },
      ];
      svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }, { ip: '5.6.7.8' }] };
    }));
    return c.state({ nodeIP });
  }

  it('lists every firewalled LB IP:port per protocol, sorted, when no range holds the node IP', () => {
    expect(lbNoNodeAccessEntries(new IpsetView(state('192.168.0.1')), 'IPv4')).toEqual([
      { ip: '1.2.3.4', protocol: 'tcp', port: 80 },
      { ip: '1.2.3.4', protocol: 'udp', port: 53 },
      { ip: '5.6.7.8', protocol: 'tcp', port: 80 },
      { ip: '5.6.7.8', protocol: 'udp', port: 53 },
    ]);
    expect(lbNoNodeAccessEntries(new IpsetView(state(null)), 'IPv4')).toHaveLength(4);
  });

  it('is empty when a range holds the node IP (the node is let in by KUBE-LOAD-BALANCER-SOURCE-IP instead)', () => {
    expect(lbNoNodeAccessEntries(new IpsetView(state('10.1.2.3')), 'IPv4')).toEqual([]);
  });
});
