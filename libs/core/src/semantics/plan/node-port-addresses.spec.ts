import { selectLocalDetector } from '../local-detect/select-local-detector.js';
import { RecordingLogger } from '../../testing/host-fakes.js';
import { parseNodePortAddresses, resolveNodePortAddresses } from './node-port-addresses.js';

const interfaces = () => ({
  lo: [
    { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4' as const, mac: '', internal: true, cidr: '127.0.0.1/8' },
    { address: '::1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', family: 'IPv6' as const, mac: '', internal: true, cidr: '::1/128', scopeid: 0 },
  ],
  eth0: [
    { address: '192.168.50.1', netmask: '255.255.255.0', family: 'IPv4' as const, mac: '', internal: false, cidr: '192.168.50.1/24' },
    { address: '10.0.0.5', netmask: '255.0.0.0', family: 'IPv4' as const, mac: '', internal: false, cidr: '10.0.0.5/8' },
    { address: 'fd00:50::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6' as const, mac: '', internal: false, cidr: 'fd00:50::1/64', scopeid: 0 },
  ],
});

describe('nodePortAddresses', () => {
  const logger = new RecordingLogger();

  it('null, [] or only CIDRs of the other family select every address (and loopback)', () => {
    for (const config of [null, [], ['fd00::/8']]) {
      const npa = parseNodePortAddresses(config, 'IPv4', undefined, logger);
      expect(npa).toMatchObject({ matchAll: true, containsIPv4Loopback: true });
      expect(resolveNodePortAddresses(npa, interfaces)).toEqual({ all: true });
    }
  });

  it('CIDRs select the local addresses inside them, per family', () => {
    const v4 = parseNodePortAddresses(['192.168.50.0/24', 'fd00:50::/64'], 'IPv4', undefined, logger);
    expect(v4).toMatchObject({ matchAll: false, containsIPv4Loopback: false, cidrs: ['192.168.50.0/24'] });
    expect(resolveNodePortAddresses(v4, interfaces)).toEqual({ all: false, ips: ['192.168.50.1'] });
    const v6 = parseNodePortAddresses(['192.168.50.0/24', 'fd00:50::/64'], 'IPv6', undefined, logger);
    expect(resolveNodePortAddresses(v6, interfaces)).toEqual({ all: false, ips: ['fd00:50::1'] });
    const withLo = parseNodePortAddresses(['127.0.0.0/8', '10.0.0.0/8'], 'IPv4', undefined, logger);
    expect(withLo.containsIPv4Loopback).toBe(true);
    expect(resolveNodePortAddresses(withLo, interfaces)).toEqual({ all: false, ips: ['127.0.0.1', '10.0.0.5'] });
  });

  it('an explicit loopback CIDR (not a /0 covering it) is what turns localhost NodePorts on, per family', () => {
    const cases: Array<[string[], 'IPv4' | 'IPv6', boolean]> = [
      [['127.0.0.0/8', '10.0.0.0/8'], 'IPv4', true],
      [['0.0.0.0/0', '127.0.0.1/32'], 'IPv4', true],
      [['127.0.0.1/8'], 'IPv4', true],
      [['0.0.0.0/0'], 'IPv4', false],
      [['10.0.0.0/8'], 'IPv4', false],
      [['::1/128'], 'IPv4', false],
      [['::1/128'], 'IPv6', true],
      [['127.0.0.0/8'], 'IPv6', false],
      [['::/0'], 'IPv6', false],
      [['fd00::/8'], 'IPv6', false],
    ];
    for (const [config, family, want] of cases) {
      expect([config, family, parseNodePortAddresses(config, family, undefined, logger).containsExplicitLoopback]).toEqual([config, family, want]);
    }
    // Nothing given: every address, loopback included for route_localnet, but nothing explicit.
    expect(parseNodePortAddresses(null, 'IPv4', undefined, logger).containsExplicitLoopback).toBe(false);
  });

  it('"primary" is the node IP of the family', () => {
    const npa = parseNodePortAddresses(['primary'], 'IPv4', '192.168.50.1', logger);
    expect(npa.cidrs).toEqual(['192.168.50.1/32']);
    expect(resolveNodePortAddresses(npa, interfaces)).toEqual({ all: false, ips: ['192.168.50.1'] });
    const v6 = parseNodePortAddresses(['primary'], 'IPv6', 'fd00:50::1', logger);
    expect(v6.cidrs).toEqual(['fd00:50::1/128']);
  });

  it('a 0.0.0.0/0 entry matches all', () => {
    expect(parseNodePortAddresses(['10.0.0.0/8', '0.0.0.0/0'], 'IPv4', undefined, logger).matchAll).toBe(true);
  });
});

describe('selectLocalDetector', () => {
  const base = { detectLocalMode: 'ClusterCIDR' as const, clusterCIDR: '10.244.0.0/16,fd00:244::/56', detectLocal: { bridgeInterface: 'cbr0', interfaceNamePrefix: 'veth' } };
  const logger = new RecordingLogger();

  it('ClusterCIDR (and ""): the clusterCIDR of the family, else none', () => {
    expect(selectLocalDetector(base, 'IPv4', undefined, logger)).toEqual({ kind: 'cidr', cidr: '10.244.0.0/16' });
    expect(selectLocalDetector({ ...base, detectLocalMode: '' }, 'IPv6', undefined, logger)).toEqual({ kind: 'cidr', cidr: 'fd00:244::/56' });
    expect(selectLocalDetector({ ...base, clusterCIDR: '' }, 'IPv4', undefined, logger)).toEqual({ kind: 'none' });
  });

  it('NodeCIDR: the podCIDR of the family once the Node is known', () => {
    const mode = { ...base, detectLocalMode: 'NodeCIDR' as const };
    expect(selectLocalDetector(mode, 'IPv4', undefined, logger)).toEqual({ kind: 'none' });
    expect(selectLocalDetector(mode, 'IPv6', ['10.244.3.0/24', 'fd00:244:0:3::/64'], logger)).toEqual({ kind: 'cidr', cidr: 'fd00:244:0:3::/64' });
  });

  it('BridgeInterface / InterfaceNamePrefix', () => {
    expect(selectLocalDetector({ ...base, detectLocalMode: 'BridgeInterface' }, 'IPv4', undefined, logger)).toEqual({ kind: 'bridge-interface', interfaceName: 'cbr0' });
    expect(selectLocalDetector({ ...base, detectLocalMode: 'InterfaceNamePrefix' }, 'IPv4', undefined, logger)).toEqual({ kind: 'interface-name-prefix', prefix: 'veth' });
    expect(selectLocalDetector({ ...base, detectLocalMode: 'BridgeInterface', detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' } }, 'IPv4', undefined, logger)).toEqual({ kind: 'none' });
  });
});
