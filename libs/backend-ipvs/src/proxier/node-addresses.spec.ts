import type { NetworkInterfaceInfo } from 'node:os';
import { nullLogger, parseNodePortAddresses, resolveNodePortAddresses } from '@kube-proxy/core';
import { addressesAsInterfaces, hostAddresses, nodeObjectAddresses } from './node-addresses.js';
import { node } from './testing/proxier-fixtures.js';

describe('node addresses', () => {
  it('the Node object: every InternalIP and ExternalIP as written, no names; none without status', () => {
    const n = node([
      { type: 'Hostname', address: 'node-1' },
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'InternalDNS', address: 'node-1.internal' },
      { type: 'ExternalIP', address: '203.0.113.7' },
      { type: 'InternalIP', address: 'FD00::1' },
    ]);
    expect(nodeObjectAddresses(n)).toEqual(['10.0.0.1', '203.0.113.7', 'FD00::1']);
    expect(nodeObjectAddresses(undefined)).toEqual([]);
    expect(nodeObjectAddresses({ metadata: { name: 'node-1' } })).toEqual([]);
  });

  it('the host: every interface but kube-ipvs0, IPv6 zones removed', () => {
    const info = (address: string, family: 'IPv4' | 'IPv6'): NetworkInterfaceInfo =>
      family === 'IPv6'
        ? { address, family, netmask: '', mac: '', internal: false, cidr: null, scopeid: 2 }
        : { address, family, netmask: '', mac: '', internal: false, cidr: null };
    const nics = () => ({ eth0: [info('10.0.0.1', 'IPv4'), info('fe80::1%eth0', 'IPv6')], 'kube-ipvs0': [info('10.96.0.1', 'IPv4')], lo: [info('127.0.0.1', 'IPv4')] });
    expect(hostAddresses(nics)).toEqual(['10.0.0.1', 'fe80::1', '127.0.0.1']);
  });

  it('the dry run\'s addresses as interfaces: --nodeport-addresses selects among them as among a host\'s', () => {
    const nics = addressesAsInterfaces(['192.168.50.1', '192.168.60.5', 'fd00::5']);
    const v4 = resolveNodePortAddresses(parseNodePortAddresses(['192.168.60.0/24', 'fd00::/64'], 'IPv4', undefined, nullLogger), nics);
    const v6 = resolveNodePortAddresses(parseNodePortAddresses(['192.168.60.0/24', 'fd00::/64'], 'IPv6', undefined, nullLogger), nics);
    expect(v4).toEqual({ all: false, ips: ['192.168.60.5'] });
    expect(v6).toEqual({ all: false, ips: ['fd00::5'] });
  });
});
