import { selectLocalDetector } from '../local-detect/select-local-detector.js';
import { RecordingLogger } from '../../testing/host-fakes.js';
import { parseNodePortAddresses, resolveNodePortAddresses } from './node-port-addresses.js';
import type { IPFamily } from '../model/protocol.js';

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

  it('"primary" skips a loopback node IP (the identity\'s fallback when the Node gives none), as upstream', () => {
    const npa = parseNodePortAddresses(['primary'], 'IPv4', '127.0.0.1', logger);
    expect(npa).toMatchObject({ cidrs: ['0.0.0.0/0'], matchAll: true, containsExplicitLoopback: false });
  });

  it('"localhost" is the loopback CIDR of each family', () => {
    const v4 = parseNodePortAddresses(['localhost'], 'IPv4', '192.168.50.1', logger);
    expect(v4).toMatchObject({ cidrs: ['127.0.0.0/8'], matchAll: false, containsIPv4Loopback: true, containsLoopback: true, containsExplicitLoopback: true });
    expect(resolveNodePortAddresses(v4, interfaces)).toEqual({ all: false, ips: ['127.0.0.1'] });
    const v6 = parseNodePortAddresses(['localhost'], 'IPv6', 'fd00:50::1', logger);
    expect(v6).toMatchObject({ cidrs: ['::1/128'], matchAll: false, containsIPv4Loopback: false, containsLoopback: true, containsExplicitLoopback: true });
    expect(resolveNodePortAddresses(v6, interfaces)).toEqual({ all: false, ips: ['::1'] });
  });

  it('"all" is the zero CIDR of each family: every address, loopback included but not explicitly', () => {
    for (const [family, zero] of [['IPv4', '0.0.0.0/0'], ['IPv6', '::/0']] as const) {
      const npa = parseNodePortAddresses(['all'], family, undefined, logger);
      expect(npa).toMatchObject({ cidrs: [zero], matchAll: true, containsLoopback: true, containsExplicitLoopback: false });
      expect(resolveNodePortAddresses(npa, interfaces)).toEqual({ all: true });
    }
  });

  it('keywords mix with each other and with CIDRs, per family', () => {
    const config = ['primary', 'localhost', '10.0.0.0/8', 'fd00:99::/64'];
    const v4 = parseNodePortAddresses(config, 'IPv4', '192.168.50.1', logger);
    expect(v4).toMatchObject({ cidrs: ['192.168.50.1/32', '127.0.0.0/8', '10.0.0.0/8'], matchAll: false, containsExplicitLoopback: true });
    expect(resolveNodePortAddresses(v4, interfaces)).toEqual({ all: false, ips: ['127.0.0.1', '192.168.50.1', '10.0.0.5'] });
    const v6 = parseNodePortAddresses(config, 'IPv6', 'fd00:50::1', logger);
    expect(v6).toMatchObject({ cidrs: ['fd00:50::1/128', '::1/128', 'fd00:99::/64'], matchAll: false, containsExplicitLoopback: true });
    expect(resolveNodePortAddresses(v6, interfaces)).toEqual({ all: false, ips: ['::1', 'fd00:50::1'] });
    // "all" wins over everything else of the family, but loopback stays explicit with "localhost".
    const allLo = parseNodePortAddresses(['all', 'localhost'], 'IPv4', undefined, logger);
    expect(allLo).toMatchObject({ matchAll: true, containsExplicitLoopback: true });
    // primary without a node IP of the family leaves the family's other entries.
    const noV6IP = parseNodePortAddresses(['primary', 'localhost'], 'IPv6', undefined, logger);
    expect(noV6IP).toMatchObject({ cidrs: ['::1/128'], matchAll: false });
  });

  it('explicit loopback (upstream ContainsExplicitLoopback) versus loopback contained (ContainsLoopback)', () => {
    const cases: Array<[readonly string[] | null, IPFamily, boolean, boolean]> = [
      [null, 'IPv4', true, false],
      [[], 'IPv6', true, false],
      [['0.0.0.0/0'], 'IPv4', true, false],
      [['::/0'], 'IPv6', true, false],
      [['127.0.0.0/8'], 'IPv4', true, true],
      [['127.0.0.1/32'], 'IPv4', true, true],
      [['127.0.2.0/28'], 'IPv4', true, true],
      [['64.0.0.0/2'], 'IPv4', true, false],
      [['128.0.0.0/1', '10.0.0.0/8'], 'IPv4', false, false],
      [['::1/128'], 'IPv6', true, true],
      [['fd00::/8'], 'IPv6', false, false],
      // Only the other family's loopback: this family falls back to its zero CIDR.
      [['127.0.0.0/8'], 'IPv6', true, false],
      [['10.0.0.0/8', '::1/128'], 'IPv4', false, false],
      [['primary', '127.0.0.1/32'], 'IPv6', true, false],
    ];
    for (const [config, family, contains, explicit] of cases) {
      const npa = parseNodePortAddresses(config, family, undefined, logger);
      expect({ config, family, contains: npa.containsLoopback, explicit: npa.containsExplicitLoopback }).toEqual({ config, family, contains, explicit });
    }
  });

  it('containsIPv4Loopback follows upstream TestContainsIPv4Loopback', () => {
    const cases: Array<[readonly string[], boolean]> = [
      [[], true],
      [['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '0.0.0.0/0'], true],
      [['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '::/0'], false],
      [['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '127.0.0.0/8'], true],
      [['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '::1/128'], false],
      [['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '127.0.2.0/28'], true],
      [['224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64', '64.0.0.0/2'], true],
      [['128.0.2.0/28', '224.0.0.0/24', '192.168.0.0/16', 'fd00:1:d::/64'], false],
    ];
    for (const [config, want] of cases) {
      expect([config, parseNodePortAddresses(config, 'IPv4', undefined, logger).containsIPv4Loopback]).toEqual([config, want]);
    }
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
