import { renderIpvsadmRestore } from '../batch/render-batches.js';
import { TestCluster, makeService } from '../testing/ipvs-fixtures.js';
import { IpvsadmSaveParseError, parseIpvsadmSave } from './ipvsadm-save.js';

/** `ipvsadm --save -n` (ipvsadm 1.31, Debian 6.1 kernel in the QEMU guest) after a restore of our text plus rules of others. */
const CAPTURED_SAVE = `-A -t 10.96.0.10:80 -s rr
-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1
-a -t 10.96.0.10:80 -r 10.244.1.55:8080 -m -w 1
-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 0
-A -t 10.96.0.99:8080 -s wrr -b flag-1
-a -t 10.96.0.99:8080 -r 10.244.3.1:8080 -g -w 5
-a -t 10.96.0.99:8080 -r 10.244.3.2:8080 -i -w 2 --tun-type ipip
-A -t 10.96.0.100:81 -s rr -p 1
-A -t 10.96.0.111:80 -s rr
-A -t 10.96.0.112:80 -s rr
-A -u 10.96.0.53:53 -s rr -p 600
-a -u 10.96.0.53:53 -r 10.244.1.7:5353 -m -w 1
-A --sctp-service 10.96.0.77:7777 -s mh -p 10800 -b mh-port
-a --sctp-service 10.96.0.77:7777 -r 10.244.1.8:7000 -m -w 1
-A -t [fd00:10:96::a]:443 -s mh -b mh-fallback,mh-port
-a -t [fd00:10:96::a]:443 -r [fd00:10:244::5]:8443 -m -w 1
-a -t [fd00:10:96::a]:443 -r [fd00:10:244::6]:8443 -m -w 1
-A -u [fd00::53]:53 -s sh -b sh-fallback,sh-port
`;

/** The same guest, rules with options we never write, and a firewall-mark service. */
const CAPTURED_SAVE_OTHERS = `-A -t 10.96.0.10:80 -s rr
-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1
-A -t 10.96.0.30:80 -s sed
-a -t 10.96.0.30:80 -r 10.244.7.7:80 -i -w 1 --tun-type gue --tun-port 6080 --tun-nocsum
-A -u 10.96.0.53:53 -s rr -p 600 -M 255.255.255.0 -o
-A -u 10.96.0.54:53 -s rr -p 60 --pe sip
-A -t [fd00:10:96::a]:443 -s rr -p 30 -M 64
-a -t [fd00:10:96::a]:443 -r [fd00:10:244::5]:8443 -m -w 1
-A -f 7 -s rr
-a -f 7 -r 10.244.1.9:80 -g -w 1
`;

describe('parseIpvsadmSave', () => {
  it('reads the IPv4 virtual servers of a real --save -n, sorted by key, with scheduler, -p, -b and weighted real servers', () => {
    const v4 = parseIpvsadmSave(CAPTURED_SAVE, 'IPv4');
    expect(v4.map((vs) => vs.key)).toEqual([
      '10.96.0.100:81/TCP', '10.96.0.10:80/TCP', '10.96.0.111:80/TCP', '10.96.0.112:80/TCP', '10.96.0.53:53/UDP', '10.96.0.77:7777/SCTP', '10.96.0.99:8080/TCP',
    ]);
    expect(v4[1]).toEqual({
      protocol: 'TCP', address: '10.96.0.10', port: 80, scheduler: 'rr', flags: [], persistenceTimeout: 0, key: '10.96.0.10:80/TCP',
      realServers: [
        { address: '10.244.1.55', port: 8080, weight: 1, key: '10.244.1.55:8080' },
        { address: '10.244.1.5', port: 8080, weight: 1, key: '10.244.1.5:8080' },
        { address: '10.244.2.6', port: 8080, weight: 0, key: '10.244.2.6:8080' },
      ],
    });
    expect(v4[0]).toMatchObject({ persistenceTimeout: 1, realServers: [] });
    expect(v4[5]).toMatchObject({ protocol: 'SCTP', scheduler: 'mh', flags: ['mh-port'], persistenceTimeout: 10800 });
    expect(v4[4]).toMatchObject({ protocol: 'UDP', persistenceTimeout: 600, realServers: [{ key: '10.244.1.7:5353', weight: 1 }] });
  });

  it('keeps the forwarding method of servers someone else made (-g route, -i tunnel) and their other options', () => {
    const [, , , , , , other] = parseIpvsadmSave(CAPTURED_SAVE, 'IPv4');
    expect(other).toMatchObject({ key: '10.96.0.99:8080/TCP', scheduler: 'wrr', flags: ['flag-1'] });
    expect(other.realServers).toEqual([
      { address: '10.244.3.1', port: 8080, weight: 5, key: '10.244.3.1:8080', forwarding: 'route' },
      { address: '10.244.3.2', port: 8080, weight: 2, key: '10.244.3.2:8080', forwarding: 'tunnel', otherOptions: ['--tun-type ipip'] },
    ]);
  });

  it('reads only the IPv6 virtual servers for IPv6, keys bracketed, every -b flag ipvsadm prints', () => {
    const v6 = parseIpvsadmSave(CAPTURED_SAVE, 'IPv6');
    expect(v6.map((vs) => [vs.key, vs.scheduler, vs.flags.join(','), vs.realServers.map((r) => r.key).join(' ')])).toEqual([
      ['[fd00:10:96::a]:443/TCP', 'mh', 'mh-fallback,mh-port', '[fd00:10:244::5]:8443 [fd00:10:244::6]:8443'],
      ['[fd00::53]:53/UDP', 'sh', 'sh-fallback,sh-port', ''],
    ]);
  });

  it('keeps -M, --pe and -o as other options and skips firewall-mark services with their real servers', () => {
    const v4 = parseIpvsadmSave(CAPTURED_SAVE_OTHERS, 'IPv4');
    expect(v4.map((vs) => [vs.key, vs.otherOptions ?? []])).toEqual([
      ['10.96.0.10:80/TCP', []],
      ['10.96.0.30:80/TCP', []],
      ['10.96.0.53:53/UDP', ['-M 255.255.255.0', '-o']],
      ['10.96.0.54:53/UDP', ['--pe sip']],
    ]);
    expect(v4[1].realServers[0]).toMatchObject({ forwarding: 'tunnel', otherOptions: ['--tun-type gue', '--tun-port 6080', '--tun-nocsum'] });
    expect(parseIpvsadmSave(CAPTURED_SAVE_OTHERS, 'IPv6')[0]).toMatchObject({ persistenceTimeout: 30, otherOptions: ['-M 64'] });
  });

  it('reads our own restore text back to exactly the desired state (values and keys as buildDesiredIpvsState makes them)', () => {
    const c = new TestCluster('IPv4');
    c.service(makeService('ns1', 'web', (s) => {
      s.spec = { type: 'NodePort', clusterIP: '10.96.0.10', sessionAffinity: 'ClientIP', externalIPs: ['198.51.100.7'], ports: [{ name: 'p', port: 80, protocol: 'TCP', nodePort: 30080 }, { name: 'q', port: 53, protocol: 'UDP' }, { name: 's', port: 7777, protocol: 'SCTP' }] };
    }));
    c.endpoints('ns1/web:p', [{ ip: '10.244.1.5', port: 8080 }, { ip: '10.244.2.6', port: 8080 }]);
    c.endpoints('ns1/web:q', [{ ip: '10.244.1.7', port: 5353 }]);
    const state = c.state({ scheduler: 'mh' });
    expect(state.virtualServers.length).toBeGreaterThan(4);
    expect(parseIpvsadmSave(renderIpvsadmRestore(state), 'IPv4')).toEqual(state.virtualServers);

    const c6 = new TestCluster('IPv6');
    c6.service(makeService('ns1', 'v6', (s) => {
      s.spec = { type: 'ClusterIP', clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a'], ipFamilies: ['IPv6'], ports: [{ name: 'h', port: 443, protocol: 'TCP' }] };
    }));
    c6.endpoints('ns1/v6:h', [{ ip: 'fd00:10:244::5', port: 8443 }]);
    const state6 = c6.state();
    expect(parseIpvsadmSave(renderIpvsadmRestore(state6), 'IPv6')).toEqual(state6.virtualServers);
    expect(parseIpvsadmSave(renderIpvsadmRestore(state6), 'IPv4')).toEqual([]);
  });

  it('re-canonicalises addresses (upper-case, uncompressed IPv6) so keys match ours', () => {
    const [vs] = parseIpvsadmSave('-A -t [FD00:0:0::A]:443 -s rr\n-a -t [FD00:0:0::A]:443 -r [fd00:10:244:0:0::6]:8443 -m -w 1\n', 'IPv6');
    expect(vs.key).toBe('[fd00::a]:443/TCP');
    expect(vs.realServers[0].key).toBe('[fd00:10:244::6]:8443');
  });

  it('reads empty output (no virtual servers) as none', () => {
    expect(parseIpvsadmSave('', 'IPv4')).toEqual([]);
  });

  it.each([
    ['an unknown command', '-X -t 10.0.0.1:80 -s rr', /line 1 .*-X/],
    ['an unknown option', '-A -t 10.0.0.1:80 -s rr --frobnicate', /--frobnicate/],
    ['an unknown -b flag', '-A -t 10.0.0.1:80 -s rr -b fast', /scheduler flag "fast"/],
    ['a real server before its service', '-a -t 10.0.0.1:80 -r 10.1.1.1:80 -m -w 1', /no -A line/],
    ['an address that is not one', '-A -t 10.0.0.300:80 -s rr', /not ADDRESS:PORT/],
    ['an IPv6 address without brackets', '-A -t fd00::1:80 -s rr', /not ADDRESS:PORT/],
    ['a port out of range', '-A -t 10.0.0.1:70000 -s rr', /not ADDRESS:PORT/],
    ['an edit line --save never prints', '-E -t 10.0.0.1:80 -s rr', /not a line ipvsadm --save prints/],
    ['a missing weight value', '-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.1.1.1:80 -m -w', /line 2 .*-w weight is missing/],
  ])('throws naming the line for %s', (_what, text, message) => {
    expect(() => parseIpvsadmSave(text, 'IPv4')).toThrow(IpvsadmSaveParseError);
    expect(() => parseIpvsadmSave(text, 'IPv4')).toThrow(message);
  });

  it('throws for a virtual server listed twice', () => {
    expect(() => parseIpvsadmSave('-A -t 10.0.0.1:80 -s rr\n-A -t 10.0.0.1:80 -s wrr\n', 'IPv4')).toThrow(/listed twice/);
  });
});
