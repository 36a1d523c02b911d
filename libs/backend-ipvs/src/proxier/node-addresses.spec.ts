import type { NetworkInterfaceInfo } from 'node:os';
import { hostAddresses } from './node-addresses.js';

describe('node addresses', () => {
  it('the host: every interface but kube-ipvs0, IPv6 zones removed', () => {
    const info = (address: string, family: 'IPv4' | 'IPv6'): NetworkInterfaceInfo =>
      family === 'IPv6'
        ? { address, family, netmask: '', mac: '', internal: false, cidr: null, scopeid: 2 }
        : { address, family, netmask: '', mac: '', internal: false, cidr: null };
    const nics = () => ({ eth0: [info('10.0.0.1', 'IPv4'), info('fe80::1%eth0', 'IPv6')], 'kube-ipvs0': [info('10.96.0.1', 'IPv4')], lo: [info('127.0.0.1', 'IPv4')] });
    expect(hostAddresses(nics)).toEqual(['10.0.0.1', 'fe80::1', '127.0.0.1']);
  });
});
