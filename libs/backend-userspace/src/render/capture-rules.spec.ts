import { renderCaptureRules, type CapturePortal } from './capture-rules.js';

const web: CapturePortal = {
  name: 'default/web:http',
  protocol: 'TCP',
  clusterIP: '10.96.0.10',
  port: 80,
  externalIPs: [],
  loadBalancerIPs: [],
  nodePort: 0,
  internalProxyPort: 36001,
  externalProxyPort: 36001,
};

const HEADER_NAT = [
  '*nat',
  ':KUBE-PORTALS-CONTAINER - [0:0]',
  ':KUBE-PORTALS-HOST - [0:0]',
  ':KUBE-NODEPORT-CONTAINER - [0:0]',
  ':KUBE-NODEPORT-HOST - [0:0]',
];

const lines = (payload: string): string[] => payload.split('\n');

describe('renderCaptureRules', () => {
  it('declares every capture chain even with nothing to capture (so a restore empties them)', () => {
    const r = renderCaptureRules([], { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: '192.168.1.5' });
    expect(lines(r.payload)).toEqual([...HEADER_NAT, 'COMMIT', '*filter', ':KUBE-NODEPORT-NON-LOCAL - [0:0]', 'COMMIT', '']);
    expect([r.natRules, r.filterRules, r.hostRulesOmitted]).toEqual([0, 0, false]);
  });

  it('cluster IP: REDIRECT from containers, DNAT to the node IP from the host (upstream shapes)', () => {
    const r = renderCaptureRules([web], { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: '192.168.1.5' });
    expect(lines(r.payload)).toEqual([
      ...HEADER_NAT,
      '-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j REDIRECT --to-ports 36001',
      '-A KUBE-PORTALS-HOST -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination 192.168.1.5:36001',
      'COMMIT',
      '*filter',
      ':KUBE-NODEPORT-NON-LOCAL - [0:0]',
      'COMMIT',
      '',
    ]);
    expect([r.natRules, r.filterRules]).toEqual([2, 0]);
  });

  it('external IPs, LoadBalancer IPs and NodePorts go to the external proxy port', () => {
    const svc: CapturePortal = {
      ...web,
      name: 'shop/front:http',
      protocol: 'UDP',
      externalIPs: ['203.0.113.7'],
      loadBalancerIPs: ['198.51.100.9'],
      nodePort: 30080,
      externalProxyPort: 36002,
    };
    const r = renderCaptureRules([svc], { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: '192.168.1.5' });
    const common = '-m comment --comment shop/front:http -p udp -m udp';
    expect(lines(r.payload)).toEqual([
      ...HEADER_NAT,
      `-A KUBE-PORTALS-CONTAINER ${common} --dport 80 -d 10.96.0.10/32 -j REDIRECT --to-ports 36001`,
      `-A KUBE-PORTALS-HOST ${common} --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination 192.168.1.5:36001`,
      `-A KUBE-PORTALS-CONTAINER ${common} --dport 80 -d 203.0.113.7/32 -m physdev ! --physdev-is-in -j REDIRECT --to-ports 36002`,
      `-A KUBE-PORTALS-CONTAINER ${common} --dport 80 -d 203.0.113.7/32 -m addrtype --dst-type LOCAL -j REDIRECT --to-ports 36002`,
      `-A KUBE-PORTALS-HOST ${common} --dport 80 -d 203.0.113.7/32 -m addrtype --dst-type LOCAL -j DNAT --to-destination 192.168.1.5:36002`,
      `-A KUBE-PORTALS-CONTAINER ${common} --dport 80 -d 198.51.100.9/32 -j REDIRECT --to-ports 36002`,
      `-A KUBE-PORTALS-HOST ${common} --dport 80 -d 198.51.100.9/32 -j DNAT --to-destination 192.168.1.5:36002`,
      `-A KUBE-NODEPORT-CONTAINER ${common} --dport 30080 -j REDIRECT --to-ports 36002`,
      `-A KUBE-NODEPORT-HOST ${common} --dport 30080 -j DNAT --to-destination 192.168.1.5:36002`,
      'COMMIT',
      '*filter',
      ':KUBE-NODEPORT-NON-LOCAL - [0:0]',
      `-A KUBE-NODEPORT-NON-LOCAL ${common} --dport 36002 -m state --state NEW -j ACCEPT`,
      'COMMIT',
      '',
    ]);
  });

  it('--nodeport-addresses narrows NodePorts: one rule per selected address; none selected, no NodePort rules', () => {
    const np: CapturePortal = { ...web, name: 'default/np:http', clusterIP: '', nodePort: 30080, externalProxyPort: 36002 };
    const nodePortLines = (ips: readonly string[] | null, family: 'IPv4' | 'IPv6' = 'IPv4', nodeIP = '192.168.1.5') =>
      lines(renderCaptureRules([np], { family, listenIP: family === 'IPv6' ? '::' : '0.0.0.0', nodeIP, nodePortIPs: ips }).payload).filter((l) => l.includes('NODEPORT-') && l.startsWith('-A'));
    expect(nodePortLines(['192.168.1.5', '127.0.0.1'])).toEqual([
      '-A KUBE-NODEPORT-CONTAINER -m comment --comment default/np:http -p tcp -m tcp --dport 30080 -d 192.168.1.5/32 -j REDIRECT --to-ports 36002',
      '-A KUBE-NODEPORT-HOST -m comment --comment default/np:http -p tcp -m tcp --dport 30080 -d 192.168.1.5/32 -j DNAT --to-destination 192.168.1.5:36002',
      '-A KUBE-NODEPORT-CONTAINER -m comment --comment default/np:http -p tcp -m tcp --dport 30080 -d 127.0.0.1/32 -j REDIRECT --to-ports 36002',
      '-A KUBE-NODEPORT-HOST -m comment --comment default/np:http -p tcp -m tcp --dport 30080 -d 127.0.0.1/32 -j DNAT --to-destination 192.168.1.5:36002',
      '-A KUBE-NODEPORT-NON-LOCAL -m comment --comment default/np:http -p tcp -m tcp --dport 36002 -m state --state NEW -j ACCEPT',
    ]);
    expect(nodePortLines(['::1'], 'IPv6', 'fd00::5')).toEqual([
      '-A KUBE-NODEPORT-CONTAINER -m comment --comment default/np:http -p tcp -m tcp --dport 30080 -d ::1/128 -j REDIRECT --to-ports 36002',
      '-A KUBE-NODEPORT-HOST -m comment --comment default/np:http -p tcp -m tcp --dport 30080 -d ::1/128 -j DNAT --to-destination [fd00::5]:36002',
      '-A KUBE-NODEPORT-NON-LOCAL -m comment --comment default/np:http -p tcp -m tcp --dport 36002 -m state --state NEW -j ACCEPT',
    ]);
    expect(nodePortLines([])).toEqual([]);
    // null: every local address, as upstream's userspace mode (no destination match).
    expect(nodePortLines(null).filter((l) => l.includes(' -d '))).toEqual([]);
    expect(() => renderCaptureRules([np], { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: null, nodePortIPs: ['10.0.0.1 -j ACCEPT'] })).toThrow();
  });

  it('a specific listen address is DNATed to from containers and host alike', () => {
    const r = renderCaptureRules([web], { family: 'IPv4', listenIP: '10.0.0.4', nodeIP: '192.168.1.5' });
    expect(r.payload).toContain('-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination 10.0.0.4:36001');
    expect(r.payload).toContain('-A KUBE-PORTALS-HOST -m comment --comment default/web:http -p tcp -m tcp --dport 80 -d 10.96.0.10/32 -j DNAT --to-destination 10.0.0.4:36001');
  });

  it('IPv6: /128 destinations and bracketed DNAT targets', () => {
    const v6 = { ...web, clusterIP: 'fd00:10:96::a' };
    const r = renderCaptureRules([v6], { family: 'IPv6', listenIP: '::', nodeIP: 'fd00::5' });
    expect(r.payload).toContain('-d fd00:10:96::a/128 -j REDIRECT --to-ports 36001');
    expect(r.payload).toContain('-d fd00:10:96::a/128 -j DNAT --to-destination [fd00::5]:36001');
  });

  it('without a node IP the host rules are left out and reported', () => {
    const r = renderCaptureRules([web], { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: null });
    expect(r.payload).not.toContain('-A KUBE-PORTALS-HOST');
    expect(r.natRules).toBe(1);
    expect(r.hostRulesOmitted).toBe(true);
  });

  it('sorts by name, and writes an odd name as comment-safe text so it stays one argument', () => {
    const odd = { ...web, name: 'ns/has "quotes" and spaces:p' };
    const r = renderCaptureRules([odd, { ...web, name: 'a/first:p' }], { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: '192.168.1.5' });
    const rules = lines(r.payload).filter((l) => l.startsWith('-A '));
    expect(rules[0]).toContain('--comment a/first:p ');
    expect(rules[2]).toContain('--comment ns/has%20%22quotes%22%20and%20spaces:p -p tcp');
  });
});
