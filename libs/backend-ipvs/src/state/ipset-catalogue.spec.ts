import { IPSET_NAME_MAX_LENGTH, ipsetCatalogue, ipsetName } from './ipset-catalogue.js';

describe('ipset catalogue', () => {
  it("holds upstream's seventeen sets with their types and comments", () => {
    const v4 = ipsetCatalogue('IPv4');
    expect(v4.map((s) => `${s.name} ${s.type}`)).toEqual([
      'KUBE-LOOP-BACK hash:ip,port,ip',
      'KUBE-CLUSTER-IP hash:ip,port',
      'KUBE-EXTERNAL-IP hash:ip,port',
      'KUBE-EXTERNAL-IP-LOCAL hash:ip,port',
      'KUBE-LOAD-BALANCER hash:ip,port',
      'KUBE-LOAD-BALANCER-FW hash:ip,port',
      'KUBE-LOAD-BALANCER-LOCAL hash:ip,port',
      'KUBE-LOAD-BALANCER-SOURCE-IP hash:ip,port,ip',
      'KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net',
      'KUBE-NODE-PORT-TCP bitmap:port',
      'KUBE-NODE-PORT-LOCAL-TCP bitmap:port',
      'KUBE-NODE-PORT-UDP bitmap:port',
      'KUBE-NODE-PORT-LOCAL-UDP bitmap:port',
      'KUBE-NODE-PORT-SCTP-HASH hash:ip,port',
      'KUBE-NODE-PORT-LOCAL-SCTP-HASH hash:ip,port',
      'KUBE-HEALTH-CHECK-NODE-PORT bitmap:port',
      'KUBE-IPVS-IPS hash:ip',
    ]);
    expect(v4.find((s) => s.name === 'KUBE-CLUSTER-IP')?.comment).toBe('Kubernetes service cluster ip + port for masquerade purpose');
    expect(v4.every((s) => s.family === 'IPv4')).toBe(true);
  });

  it('names IPv6 sets KUBE-6-… cut to 31 characters, as upstream NewIPSet', () => {
    expect(ipsetName('KUBE-CLUSTER-IP', 'IPv6')).toBe('KUBE-6-CLUSTER-IP');
    expect(ipsetName('KUBE-LOAD-BALANCER-SOURCE-CIDR', 'IPv6')).toBe('KUBE-6-LOAD-BALANCER-SOURCE-CID');
    expect(ipsetName('KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'IPv6')).toBe('KUBE-6-NODE-PORT-LOCAL-SCTP-HAS');
    const v6 = ipsetCatalogue('IPv6');
    expect(v6.every((s) => s.name.startsWith('KUBE-6-') && s.name.length <= IPSET_NAME_MAX_LENGTH && s.family === 'IPv6')).toBe(true);
    expect(new Set(v6.map((s) => s.name)).size).toBe(v6.length);
  });
});
