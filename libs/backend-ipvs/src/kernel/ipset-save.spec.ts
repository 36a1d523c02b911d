import { renderIpsetRestore } from '../batch/render-batches.js';
import { TestCluster, makeService } from '../testing/ipvs-fixtures.js';
import { parseIpsetSave } from './ipset-save.js';

/** `ipset save` (ipset 7.17, Debian's 6.1 kernel in the QEMU guest) after restoring catalogue-style sets. */
const CAPTURED = `create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x048ada21
add KUBE-CLUSTER-IP 10.96.0.12,tcp:80
add KUBE-CLUSTER-IP 10.96.0.10,tcp:80
add KUBE-CLUSTER-IP 10.96.0.77,sctp:7777
create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536 bucketsize 12 initval 0x90eea368
add KUBE-6-CLUSTER-IP fd00:10:96::a,tcp:443
create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
add KUBE-NODE-PORT-TCP 30080
create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0xda33ecae
add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5
create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x1d7645b8
add KUBE-LOAD-BALANCER-SOURCE-CIDR 203.0.113.1,tcp:80,10.0.0.0/8
create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x97693cde
add KUBE-IPVS-IPS 10.96.0.10
create KUBE-6-IPVS-IPS hash:ip family inet6 hashsize 1024 maxelem 65536 bucketsize 12 initval 0xc27c84b2
add KUBE-6-IPVS-IPS fd00:10:96::a
create KUBE-EMPTY hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x2efe0cc0
`;

describe('parseIpsetSave', () => {
  it('maps every set of a real ipset save to its entries as printed after "add NAME ", in save order', () => {
    expect(Object.fromEntries(parseIpsetSave(CAPTURED))).toEqual({
      'KUBE-CLUSTER-IP': ['10.96.0.12,tcp:80', '10.96.0.10,tcp:80', '10.96.0.77,sctp:7777'],
      'KUBE-6-CLUSTER-IP': ['fd00:10:96::a,tcp:443'],
      'KUBE-NODE-PORT-TCP': ['30080'],
      'KUBE-LOOP-BACK': ['10.244.1.5,tcp:8080,10.244.1.5'],
      'KUBE-LOAD-BALANCER-SOURCE-CIDR': ['203.0.113.1,tcp:80,10.0.0.0/8'],
      'KUBE-IPVS-IPS': ['10.96.0.10'],
      'KUBE-6-IPVS-IPS': ['fd00:10:96::a'],
      'KUBE-EMPTY': [],
    });
    expect([...parseIpsetSave(CAPTURED).keys()][0]).toBe('KUBE-CLUSTER-IP');
  });

  it('gives a set from its create line even when it has no entry, and nothing for empty output', () => {
    expect(parseIpsetSave('create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536\n').get('KUBE-IPVS-IPS')).toEqual([]);
    expect(parseIpsetSave('').size).toBe(0);
  });

  it('reads our own restore script back to the desired entries of every catalogue set', () => {
    const c = new TestCluster('IPv4');
    c.service(makeService('ns1', 'lb', (s) => {
      s.spec = { type: 'LoadBalancer', clusterIP: '10.96.0.10', loadBalancerSourceRanges: ['10.0.0.0/8'], ports: [{ name: 'p', port: 80, protocol: 'TCP', nodePort: 30080 }] };
      s.status = { loadBalancer: { ingress: [{ ip: '203.0.113.1' }] } };
    }));
    c.endpoints('ns1/lb:p', [{ ip: '10.244.1.5', port: 8080, nodeName: 'test-hostname' }]);
    const state = c.state();
    const parsed = parseIpsetSave(renderIpsetRestore(state));
    expect([...parsed.keys()]).toEqual(state.ipsets.map((s) => s.set.name));
    for (const s of state.ipsets) expect(parsed.get(s.set.name)).toEqual(s.entries);
    expect(parsed.get('KUBE-LOAD-BALANCER-SOURCE-CIDR')).toEqual(['203.0.113.1,tcp:80,10.0.0.0/8']);
  });

  it.each([
    ['an add before its create', 'add KUBE-X 10.0.0.1\n', /line 1 .*no create line/],
    ['another command', 'create A hash:ip\nflush A\n', /line 2 .*neither a create nor an add/],
    ['a set created twice', 'create A hash:ip\ncreate A hash:ip\n', /created twice/],
    ['an add without entry', 'create A hash:ip\nadd A\n', /line 2/],
  ])('throws naming the line for %s', (_what, text, message) => {
    expect(() => parseIpsetSave(text)).toThrow(message);
  });
});
