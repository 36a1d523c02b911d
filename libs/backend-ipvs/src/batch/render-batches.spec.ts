import { makeService, TestCluster } from '../testing/ipvs-fixtures.js';
import { renderIpsetRestore, renderIpvsadmRestore } from './render-batches.js';

function cluster(): TestCluster {
  const c = new TestCluster();
  c.service(makeService('ns1', 'web', (svc) => {
    svc.spec.type = 'NodePort';
    svc.spec.clusterIP = '10.96.0.10';
    svc.spec.sessionAffinity = 'ClientIP';
    svc.spec.ports = [
      { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'sig', port: 7777, protocol: 'SCTP' },
    ];
  }));
  for (const p of ['http', 'dns', 'sig']) c.endpoints(`ns1/web:${p}`, [{ ip: '10.244.1.5', port: 8080, nodeName: 'test-hostname' }, { ip: '10.244.2.6', port: 8080 }]);
  return c;
}

describe('renderIpvsadmRestore', () => {
  it('writes every virtual server and its real servers as ipvsadm --save -n prints them', () => {
    expect(renderIpvsadmRestore(cluster().state({ localAddresses: ['192.168.0.2'] }))).toBe(
      [
        '-A -u 10.96.0.10:53 -s rr -p 10800',
        '-a -u 10.96.0.10:53 -r 10.244.1.5:8080 -m -w 1',
        '-a -u 10.96.0.10:53 -r 10.244.2.6:8080 -m -w 1',
        '-A --sctp-service 10.96.0.10:7777 -s rr -p 10800',
        '-a --sctp-service 10.96.0.10:7777 -r 10.244.1.5:8080 -m -w 1',
        '-a --sctp-service 10.96.0.10:7777 -r 10.244.2.6:8080 -m -w 1',
        '-A -t 10.96.0.10:80 -s rr -p 10800',
        '-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1',
        '-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 1',
        '-A -t 192.168.0.2:30080 -s rr -p 10800',
        '-a -t 192.168.0.2:30080 -r 10.244.1.5:8080 -m -w 1',
        '-a -t 192.168.0.2:30080 -r 10.244.2.6:8080 -m -w 1',
        '',
      ].join('\n'),
    );
  });

  it('brackets IPv6 addresses and prints the persistence timeout before the mh-port flag, as ipvsadm --save -n does', () => {
    const c = new TestCluster('IPv6');
    c.service(makeService('ns1', 'v6', (svc) => {
      svc.spec.clusterIP = 'fd00:10:96::a';
      svc.spec.clusterIPs = ['fd00:10:96::a'];
      svc.spec.ipFamilies = ['IPv6'];
      svc.spec.sessionAffinity = 'ClientIP';
      svc.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 30 } };
      svc.spec.ports = [{ port: 443, protocol: 'TCP' }];
    }));
    c.endpoints('ns1/v6', [{ ip: 'fd00:10:244::5', port: 8443 }]);
    expect(renderIpvsadmRestore(c.state({ scheduler: 'mh' }))).toBe(
      '-A -t [fd00:10:96::a]:443 -s mh -p 30 -b mh-port\n-a -t [fd00:10:96::a]:443 -r [fd00:10:244::5]:8443 -m -w 1\n',
    );
  });

  it('is empty for no services', () => {
    expect(renderIpvsadmRestore(new TestCluster().state())).toBe('');
  });
});

describe('renderIpsetRestore', () => {
  it('creates every set as ipset save prints it and adds the sorted entries', () => {
    const text = renderIpsetRestore(cluster().state({ localAddresses: ['192.168.0.2'] }));
    expect(text).toBe(
      [
        'create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536',
        'add KUBE-LOOP-BACK 10.244.1.5,sctp:8080,10.244.1.5',
        'add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5',
        'add KUBE-LOOP-BACK 10.244.1.5,udp:8080,10.244.1.5',
        'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536',
        'add KUBE-CLUSTER-IP 10.96.0.10,sctp:7777',
        'add KUBE-CLUSTER-IP 10.96.0.10,tcp:80',
        'add KUBE-CLUSTER-IP 10.96.0.10,udp:53',
        'create KUBE-EXTERNAL-IP hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-EXTERNAL-IP-LOCAL hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-LOAD-BALANCER hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-LOAD-BALANCER-FW hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-LOAD-BALANCER-LOCAL hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-LOAD-BALANCER-SOURCE-IP hash:ip,port,ip family inet hashsize 1024 maxelem 65536',
        'create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536',
        'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535',
        'add KUBE-NODE-PORT-TCP 30080',
        'create KUBE-NODE-PORT-LOCAL-TCP bitmap:port range 0-65535',
        'create KUBE-NODE-PORT-UDP bitmap:port range 0-65535',
        'create KUBE-NODE-PORT-LOCAL-UDP bitmap:port range 0-65535',
        'create KUBE-NODE-PORT-SCTP-HASH hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-NODE-PORT-LOCAL-SCTP-HASH hash:ip,port family inet hashsize 1024 maxelem 65536',
        'create KUBE-HEALTH-CHECK-NODE-PORT bitmap:port range 0-65535',
        'create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536',
        'add KUBE-IPVS-IPS 10.96.0.10',
        '',
      ].join('\n'),
    );
  });

  it('creates the IPv6 sets with family inet6', () => {
    const text = renderIpsetRestore(new TestCluster('IPv6').state());
    expect(text.split('\n')[0]).toBe('create KUBE-6-LOOP-BACK hash:ip,port,ip family inet6 hashsize 1024 maxelem 65536');
    expect(text).toContain('create KUBE-6-NODE-PORT-TCP bitmap:port range 0-65535\n');
  });
});
