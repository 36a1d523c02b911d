import {
  canonicalIP,
  cidrContains,
  ipFamilyOf,
  isDualStackCIDRs,
  isLoopbackIP,
  isValidCIDR,
  isValidIP,
  parseCIDR,
  parseIP,
} from './ip.js';

describe('ipFamilyOf', () => {
  it.each([
    ['10.0.0.1', 'IPv4'],
    ['0.0.0.0', 'IPv4'],
    ['255.255.255.255', 'IPv4'],
    // ParseIPSloppy (Go 1.16's parser): any number of leading zeros, decimal in IPv4, hex in IPv6.
    ['010.001.002.003', 'IPv4'],
    ['0000010.1.2.3', 'IPv4'],
    ['::ffff:010.001.002.003', 'IPv4'],
    ['00001::0000000002', 'IPv6'],
    ['::', 'IPv6'],
    ['::1', 'IPv6'],
    ['2001:db8::1', 'IPv6'],
    ['2001:DB8:0:0:0:0:0:1', 'IPv6'],
    ['fe80::1:2:3:4', 'IPv6'],
    // IPv4-mapped IPv6 is IPv4 (Go's To4() != nil), in either notation.
    ['::ffff:1.2.3.4', 'IPv4'],
    ['0:0:0:0:0:ffff:7f00:1', 'IPv4'],
    ['64:ff9b::1.2.3.4', 'IPv6'],
    ['::1.2.3.4', 'IPv6'],
    ['1:2:3:4:5:6:7::', 'IPv6'],
  ])('%s is %s', (ip, family) => {
    expect(ipFamilyOf(ip)).toBe(family);
  });

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '0256.1.1.1',
    '0x1.2.3.4',
    '1.2.3.4:80',
    '1.2.3.-4',
    '1.2.3.4/32',
    ' 1.2.3.4',
    'a.b.c.d',
    ':::',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '1::2::3',
    '12345::1',
    '1::10000',
    '1.2.3.4::',
    '::1.2.3.4:5',
    '1:2:3:4:5:6::1.2.3.4',
    'fe80::1%eth0',
    '1:2:3:4:5:6:7::8',
    'g::1',
    'hostname',
  ])('rejects %j', (ip) => {
    expect(ipFamilyOf(ip)).toBeUndefined();
    expect(isValidIP(ip)).toBe(false);
  });
});

describe('canonicalIP', () => {
  it.each([
    ['010.001.002.003', '10.1.2.3'],
    ['0000010.0.0.1', '10.0.0.1'],
    ['2001:00db8::0001', '2001:db8::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:0db8:0000:0001:0000:0000:0000:0001', '2001:db8:0:1::1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['1::', '1::'],
  ])('%s -> %s', (input, expected) => {
    expect(canonicalIP(input)).toBe(expected);
  });
});

describe('parseCIDR', () => {
  it('clears host bits and canonicalises', () => {
    expect(parseCIDR('10.1.2.3/8')).toMatchObject({ family: 'IPv4', prefixLength: 8, text: '10.0.0.0/8' });
    expect(parseCIDR('2001:DB8::1/32')).toMatchObject({ family: 'IPv6', prefixLength: 32, text: '2001:db8::/32' });
    expect(parseCIDR('0.0.0.0/0')?.text).toBe('0.0.0.0/0');
    expect(parseCIDR('::/0')?.text).toBe('::/0');
    expect(parseCIDR('192.168.1.77/27')?.text).toBe('192.168.1.64/27');
  });

  it('accepts leading zeros in the address and the prefix, as ParseCIDRSloppy', () => {
    expect(parseCIDR('010.000.000.000/008')?.text).toBe('10.0.0.0/8');
    expect(parseCIDR('10.0.0.0/0008')?.text).toBe('10.0.0.0/8');
  });

  it('takes the family from the notation', () => {
    expect(parseCIDR('::ffff:10.0.0.0/104')).toMatchObject({ family: 'IPv6', prefixLength: 104 });
  });

  it.each([
    '10.0.0.0',
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/-1',
    '10.0.0.0/',
    '/8',
    'x/8',
    '10.0.0.0/8/8',
    '10.0.0.0/ 8',
    '10.0.0.0/+8',
    '10.0.0.0/0x8',
  ])('rejects %j', (text) => {
    expect(parseCIDR(text)).toBeUndefined();
    expect(isValidCIDR(text)).toBe(false);
  });
});

describe('cidrContains', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['192.168.1.64/27', '192.168.1.95', true],
    ['192.168.1.64/27', '192.168.1.96', false],
    ['0.0.0.0/0', '1.2.3.4', true],
    ['1.2.3.4/32', '1.2.3.4', true],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/33', '2001:db8:8000::1', false],
    ['::/0', '::1', true],
    ['0.0.0.0/0', '::1', false],
    ['::/0', '1.2.3.4', false],
    ['10.0.0.0/8', 'garbage', false],
    ['10.0.0.0/', '10.0.0.1', false],
    ['10.0.0.0/8', '2001:db8::1', false],
    // v4-mapped address text is an IPv4 address.
    ['10.0.0.0/8', '::ffff:10.1.2.3', true],
    ['::/0', '::ffff:1.2.3.4', false],
    // Go's IPNet.Contains: a block whose network is IPv4-mapped holds the IPv4 addresses it maps.
    ['::ffff:0:0/96', '::ffff:10.1.2.3', true],
    ['::ffff:0:0/96', '10.1.2.3', true],
    ['::ffff:10.0.0.0/104', '10.9.9.9', true],
    ['::ffff:10.0.0.0/104', '11.0.0.1', false],
    ['::ffff:0:0/96', '2001:db8::1', false],
  ])('%s contains %s: %s', (cidr, ip, expected) => {
    expect(cidrContains(cidr, ip)).toBe(expected);
  });

  it('accepts parsed values', () => {
    const block = parseCIDR('10.0.0.0/24')!;
    expect(cidrContains(block, '10.0.0.200')).toBe(true);
  });
});

describe('isLoopbackIP (Go net.IP.IsLoopback)', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['128.0.0.1', false],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::2', false],
    ['::', false],
    ['::ffff:127.0.0.1', true],
    ['0:0:0:0:0:ffff:7f00:1', true],
    ['::ffff:128.0.0.1', false],
    ['::127.0.0.1', false],
    ['2001:db8::1', false],
    ['garbage', false],
  ])('%s: %s', (ip, expected) => {
    expect(isLoopbackIP(ip)).toBe(expected);
  });

  it('accepts parsed values', () => {
    expect(isLoopbackIP(parseIP('127.0.0.1')!)).toBe(true);
  });
});

describe('isDualStackCIDRs (netutils.IsDualStackCIDRStrings)', () => {
  it.each([
    [['10.0.0.0/8', 'fd00::/48'], true],
    [['fd00::/48', '10.0.0.0/8', '11.0.0.0/8'], true],
    [['10.0.0.0/8', '11.0.0.0/8'], false],
    [['fd00::/48'], false],
    [['10.0.0.0/8', 'fd00::/48', 'bad'], false],
    [[], false],
  ])('%j: %s', (cidrs, expected) => {
    expect(isDualStackCIDRs(cidrs)).toBe(expected);
  });
});
