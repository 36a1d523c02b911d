import { refusedRealServerReason, refusedServiceAddressReason, unbindableReason } from './kernel-refused-addresses.js';

describe('addresses the kernel refuses (measured; see the module header)', () => {
  it.each([
    ['10.96.0.10', undefined, undefined, undefined],
    ['127.0.0.5', undefined, undefined, undefined],
    ['169.254.1.1', undefined, undefined, undefined],
    ['224.0.0.5', undefined, undefined, 'IPv4 multicast'],
    ['255.255.255.255', undefined, undefined, 'the IPv4 broadcast address'],
    ['0.0.0.0', 'the unspecified address', 'the unspecified address', 'the unspecified address'],
    ['2001:db8::5', undefined, undefined, undefined],
    ['fe80::5', undefined, undefined, 'IPv6 link-local'],
    ['::1', undefined, 'IPv6 loopback', undefined],
    ['::', 'the unspecified address', 'the unspecified address', 'the unspecified address'],
    ['ff02::5', undefined, 'IPv6 multicast', 'IPv6 multicast'],
    ['x', 'not an IP address', 'not an IP address', 'not an IP address'],
  ])('%s: service address %s, kube-ipvs0 %s, real server %s', (ip, service, bind, realServer) => {
    expect(refusedServiceAddressReason(ip)).toBe(service);
    expect(unbindableReason(ip)).toBe(bind);
    expect(refusedRealServerReason(ip)).toBe(realServer);
  });
});
