import { isMissingDevice, parseIpAddrShow } from './ip-addr.js';

/** `ip -o -f inet|inet6 addr show dev kube-ipvs0` (iproute2 6.1) in the QEMU guest, kube-ipvs0 a DOWN dummy. */
const CAPTURED_V4 = `2: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
2: kube-ipvs0    inet 10.96.0.20/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
2: kube-ipvs0    inet 10.96.0.53/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
`;
const CAPTURED_V6 = `2: kube-ipvs0    inet6 fd00::53/128 scope global \\       valid_lft forever preferred_lft forever
2: kube-ipvs0    inet6 fd00:10:96::a/128 scope global \\       valid_lft forever preferred_lft forever
`;
/** `ip -o addr show dev kube-ipvs0` (both families) after one address of each was removed. */
const CAPTURED_BOTH = `2: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
2: kube-ipvs0    inet 10.96.0.20/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
2: kube-ipvs0    inet 10.96.0.55/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
2: kube-ipvs0    inet6 fd00:10:96::a/128 scope global \\       valid_lft forever preferred_lft forever
`;

describe('parseIpAddrShow', () => {
  it('gives the plain addresses of the family, sorted, without prefix length', () => {
    expect(parseIpAddrShow(CAPTURED_V4, 'IPv4')).toEqual(['10.96.0.10', '10.96.0.20', '10.96.0.53']);
    expect(parseIpAddrShow(CAPTURED_V6, 'IPv6')).toEqual(['fd00:10:96::a', 'fd00::53']);
  });

  it('ignores the other family in output that holds both', () => {
    expect(parseIpAddrShow(CAPTURED_BOTH, 'IPv4')).toEqual(['10.96.0.10', '10.96.0.20', '10.96.0.55']);
    expect(parseIpAddrShow(CAPTURED_BOTH, 'IPv6')).toEqual(['fd00:10:96::a']);
  });

  it('reads a link without addresses (empty output) as none, and keeps flags such as tentative out of the address', () => {
    expect(parseIpAddrShow('', 'IPv4')).toEqual([]);
    expect(parseIpAddrShow('2: kube-ipvs0    inet6 FD00::1/128 scope global tentative \\       valid_lft forever preferred_lft forever\n', 'IPv6')).toEqual(['fd00::1']);
  });

  it('throws naming the line for output it does not understand', () => {
    expect(() => parseIpAddrShow('kube-ipvs0: <BROADCAST,NOARP> mtu 1500\n', 'IPv4')).toThrow(/line 1 .*expected/);
    expect(() => parseIpAddrShow('2: kube-ipvs0    inet 10.96.0.300/32 scope global\n', 'IPv4')).toThrow(/not an IPv4 address/);
  });
});

describe('isMissingDevice', () => {
  it("recognises iproute2's words for a link that does not exist (as printed in the guest)", () => {
    expect(isMissingDevice('Device "kube-ipvs0" does not exist.\n', 'kube-ipvs0')).toBe(true);
    expect(isMissingDevice('Cannot find device "kube-ipvs0"\n', 'kube-ipvs0')).toBe(true);
    expect(isMissingDevice('Device "nosuch0" does not exist.\n', 'kube-ipvs0')).toBe(false);
    expect(isMissingDevice('RTNETLINK answers: Operation not permitted\n', 'kube-ipvs0')).toBe(false);
  });
});
