import { unbindableReason } from './bindable-address.js';

describe('unbindableReason (what the kernel refuses on kube-ipvs0, measured)', () => {
  it.each([
    ['10.96.0.10', undefined],
    ['127.0.0.5', undefined],
    ['169.254.1.1', undefined],
    ['224.0.0.5', undefined],
    ['255.255.255.255', undefined],
    ['fe80::5', undefined],
    ['2001:db8::5', undefined],
    ['0.0.0.0', 'the unspecified address'],
    ['::', 'the unspecified address'],
    ['::1', 'IPv6 loopback'],
    ['ff02::5', 'IPv6 multicast'],
    ['ff0e::1', 'IPv6 multicast'],
    ['x', 'not an IP address'],
  ])('%s: %s', (ip, why) => {
    expect(unbindableReason(ip)).toBe(why);
  });
});
