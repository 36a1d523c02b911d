/**
 * The IPVS node-port address filter. Vectors from upstream: the netlink handle's isValidForSet
 * (pkg/proxy/ipvs/netlink_linux.go), pkg/proxy/util nodeport_addresses_test.go's GetNodeIPs rows as
 * the IPVS proxier uses them (every address: isValidForSet over all interfaces; with CIDRs: the
 * addresses inside them minus loopback), and proxier_test.go's "multiple nodeIPs" node sets.
 */
import { nullLogger, parseNodePortAddresses, resolveNodePortAddresses, type IPFamily, type NetworkInterfaces } from '@kube-proxy/core';
import { buildDesiredIpvsState } from './build-desired-state.js';
import { nodePortIPs, unusableNodePortAddress } from './node-port-ips.js';

const ALL = { all: true } as const;

describe('unusableNodePortAddress', () => {
  it.each([
    ['10.20.30.51', 'IPv4', undefined],
    ['169.254.20.10', 'IPv4', undefined], // upstream drops link-local only for IPv6 (node-local DNS lives here)
    ['2001:db8::1', 'IPv6', undefined],
    ['2001:db8::1', 'IPv4', 'of the other family'],
    ['10.20.30.51', 'IPv6', 'of the other family'],
    ['127.0.0.1', 'IPv4', 'a loopback address'],
    ['127.0.1.1', 'IPv4', 'a loopback address'],
    ['::1', 'IPv6', 'a loopback address'],
    ['fe80::1', 'IPv6', 'an IPv6 link-local address'],
    ['febf::1', 'IPv6', 'an IPv6 link-local address'],
    ['0.0.0.0', 'IPv4', 'the unspecified address'],
    ['::', 'IPv6', 'the unspecified address'],
    ['::ffff:8.8.8.8', 'IPv6', 'an IPv4-mapped IPv6 address'],
    ['::ffff:8.8.8.8', 'IPv4', 'an IPv4-mapped IPv6 address'],
    ['::ffff:127.0.0.1', 'IPv4', 'an IPv4-mapped IPv6 address'],
    ['not-an-ip', 'IPv4', 'not an IP address'],
    ['10.0.0.1\n-A -t 1.1.1.1:1', 'IPv4', 'not an IP address'],
    ['fe80::1%eth0', 'IPv6', 'not an IP address'],
  ] as const)('%j as %s: %s', (ip, family, why) => {
    expect(unusableNodePortAddress(ip, family as IPFamily, true)).toBe(why);
  });

  it('keeps IPv6 link-local addresses an explicit --nodeport-addresses CIDR selected (upstream GetNodeIPs)', () => {
    expect(unusableNodePortAddress('fe80::1', 'IPv6', false)).toBeUndefined();
    expect(nodePortIPs('IPv6', { all: false, ips: ['fe80::1', '::1'] }, [])).toEqual(['fe80::1']);
  });
});

describe('nodePortIPs', () => {
  it('every node address of the family: upstream "multiple nodeIPs" (three of each family on the node)', () => {
    const node = ['100.101.102.103', '100.101.102.104', '100.101.102.105', '2001:db8::1:1', '2001:db8::1:2', '2001:db8::1:3'];
    expect(nodePortIPs('IPv4', ALL, node)).toEqual(['100.101.102.103', '100.101.102.104', '100.101.102.105']);
    expect(nodePortIPs('IPv6', ALL, node)).toEqual(['2001:db8::1:1', '2001:db8::1:2', '2001:db8::1:3']);
  });

  it('a hostile or odd address list never throws: canonical, de-duplicated, sorted, usable addresses only', () => {
    const odd = ['::ffff:8.8.8.8', 'fe80::1', '127.0.0.1', '::1', '0.0.0.0', '::', '10.0.0.2', '10.0.0.2', '010.000.000.002', '10.0.0.1', 'FD00::AB', 'fd00::ab', '', 'x', '1.2.3.4 5', '2001:db8::1\n'];
    expect(nodePortIPs('IPv4', ALL, odd)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(nodePortIPs('IPv6', ALL, odd)).toEqual(['fd00::ab']);
    expect(nodePortIPs('IPv4', { all: false, ips: odd }, [])).toEqual(['10.0.0.1', '10.0.0.2']);
  });
});

/** Upstream's GetNodeIPs rows: interfaces → what the IPVS proxier of each family serves node ports on. */
type Row = readonly [name: string, cidrs: readonly string[], interfaces: Record<string, readonly string[]>, ipv4: readonly string[], ipv6: readonly string[]];
const ROWS: readonly Row[] = [
  ['IPv4 single', ['10.20.30.0/24'], { eth0: ['10.20.30.51'], eth1: ['100.200.201.1'] }, ['10.20.30.51'], []],
  ['IPv4 zero CIDR', ['0.0.0.0/0'], { eth0: ['10.20.30.51'], lo: ['127.0.0.1'] }, ['10.20.30.51'], []],
  ['IPv6 multiple', ['2001:db8::/64', '::1/128'], { eth0: ['2001:db8::1'], lo: ['::1'] }, [], ['2001:db8::1']],
  ['IPv6 zero CIDR', ['::/0'], { eth0: ['2001:db8::1'], lo: ['::1'] }, [], ['2001:db8::1']],
  ['IPv4 localhost exact', ['127.0.0.1/32'], { eth0: ['10.20.30.51'], lo: ['127.0.0.1'] }, [], []],
  ['IPv4 localhost subnet', ['127.0.0.0/8'], { lo: ['127.0.1.1'] }, [], []],
  ['IPv4 multiple', ['10.20.30.0/24', '100.200.201.0/24'], { eth0: ['10.20.30.51'], eth1: ['100.200.201.1'] }, ['10.20.30.51', '100.200.201.1'], []],
  ['IPv4 multiple, no match', ['10.20.30.0/24', '100.200.201.0/24'], { eth0: ['192.168.1.2'], lo: ['127.0.0.1'] }, [], []],
  ['empty list, IPv4 addrs', [], { eth0: ['192.168.1.2'], lo: ['127.0.0.1'] }, ['192.168.1.2'], []],
  ['empty list, IPv6 addrs', [], { eth0: ['2001:db8::1'], lo: ['::1'] }, [], ['2001:db8::1']],
  ['IPv4 redundant CIDRs', ['1.2.3.0/24', '0.0.0.0/0'], { eth0: ['1.2.3.4'] }, ['1.2.3.4'], []],
  ['Dual-stack, redundant IPv4', ['0.0.0.0/0', '1.2.3.0/24', '2001:db8::1/128'], { eth0: ['1.2.3.4', '2001:db8::1'], lo: ['127.0.0.1', '::1'] }, ['1.2.3.4'], ['2001:db8::1']],
  ['Dual-stack, redundant IPv6', ['::/0', '1.2.3.0/24', '2001:db8::1/128'], { eth0: ['1.2.3.4', '2001:db8::1'], lo: ['127.0.0.1', '::1'] }, ['1.2.3.4'], ['2001:db8::1']],
];

function interfaces(table: Record<string, readonly string[]>): NetworkInterfaces {
  const out: ReturnType<NetworkInterfaces> = {};
  for (const [name, addresses] of Object.entries(table)) {
    out[name] = addresses.map((address) => {
      const v6 = address.includes(':');
      return { address, family: v6 ? 'IPv6' : 'IPv4', netmask: '', mac: '00:00:00:00:00:00', internal: name === 'lo', cidr: null, ...(v6 ? { scopeid: 0 } : {}) } as never;
    });
  }
  return () => out;
}

describe('upstream GetNodeIPs rows through the IPVS proxier\'s selection', () => {
  it.each(ROWS)('%s', (_name, cidrs, table, ipv4, ipv6) => {
    const nics = interfaces(table);
    const local = Object.values(table).flat();
    for (const [family, want] of [['IPv4', ipv4], ['IPv6', ipv6]] as const) {
      const selection = resolveNodePortAddresses(parseNodePortAddresses(cidrs, family, undefined, nullLogger), nics);
      expect(nodePortIPs(family, selection, local)).toEqual(want);
    }
  });
});

describe('the desired state with odd node addresses', () => {
  it('does not throw for an IPv4-mapped node address or node IP, and serves the usable addresses', () => {
    const empty = new Map();
    const v6 = buildDesiredIpvsState(empty, empty, {
      family: 'IPv6',
      nodeName: 'n',
      nodeLabels: {},
      nodeIP: '::ffff:8.8.8.8',
      nodePortAddresses: ALL,
      localAddresses: ['::ffff:8.8.8.8', 'fd00::1'],
    });
    expect(v6.virtualServers).toEqual([]);
    expect(() =>
      buildDesiredIpvsState(empty, empty, { family: 'IPv4', nodeName: 'n', nodeLabels: {}, nodeIP: '::ffff:8.8.8.8', nodePortAddresses: ALL, localAddresses: ['::ffff:8.8.8.8'] }),
    ).not.toThrow();
  });
});
