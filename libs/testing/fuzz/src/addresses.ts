/**
 * IP and CIDR generators for the fuzz objects. Valid addresses are canonical (what a canonicalizing
 * API server stores) and come from disjoint ranges per role, so a property can tell from a payload
 * which object an address came from: `good` ranges for objects meant to be accepted, `bad` ranges for
 * objects that must be rejected and so must never show up in any rule.
 */
import fc from 'fast-check';
import type { IPFamily } from '@kube-proxy/core';
import { hostileString } from './hostile-strings.js';

/** Which objects an address belongs to: accepted ones (`good`) or ones validation must reject (`bad`). */
export type AddressPool = 'good' | 'bad';

const hex = (n: number): string => n.toString(16);

/** Matches, in a payload, any address of the `bad` pool: a rejected object's address reached a rule. */
export const BAD_POOL_ADDRESS = /(^|[\s[])(10\.97\.|10\.245\.|198\.18\.0\.|fd00:10:97:|fd00:10:245:|2001:db8:bad:)/m;

/** A cluster IP unique per `index` (0..65535) within its pool. */
export function clusterIPFor(family: IPFamily, pool: AddressPool, index: number, salt: number): string {
  if (family === 'IPv4') return `10.${pool === 'good' ? 96 : 97}.${index & 255}.${(salt % 254) + 1}`;
  return `fd00:10:${pool === 'good' ? 96 : 97}::${hex(index + 1)}:${hex((salt % 65535) + 1)}`;
}

/** A pod (endpoint) IP. */
export function podIP(family: IPFamily, pool: AddressPool): fc.Arbitrary<string> {
  if (family === 'IPv4') {
    return fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 })).map(([a, b]) => `10.${pool === 'good' ? 244 : 245}.${a}.${b}`);
  }
  return fc
    .tuple(fc.integer({ min: 1, max: 0xffff }), fc.integer({ min: 1, max: 0xffff }))
    .map(([a, b]) => `fd00:10:${pool === 'good' ? 244 : 245}:${hex(a)}::${hex(b)}`);
}

/** An external / LoadBalancer IP (TEST-NET and documentation ranges; `bad` pool for rejected objects). */
export function externalIP(family: IPFamily, pool: AddressPool = 'good'): fc.Arbitrary<string> {
  if (family === 'IPv4') {
    return fc.tuple(fc.constantFrom(...(pool === 'good' ? ['203.0.113', '192.0.2'] : ['198.18.0'])), fc.integer({ min: 1, max: 254 })).map(([net, h]) => `${net}.${h}`);
  }
  return fc.integer({ min: 1, max: 0xffff }).map((h) => `2001:db8:${pool === 'good' ? 'e' : 'bad'}::${hex(h)}`);
}

/** A network CIDR (no host bits), e.g. for loadBalancerSourceRanges. */
export function networkCIDR(family: IPFamily): fc.Arbitrary<string> {
  if (family === 'IPv4') {
    return fc.oneof(
      fc.constantFrom('0.0.0.0/0', '10.0.0.0/8', '192.168.50.0/24'),
      fc.tuple(fc.integer({ min: 1, max: 223 }), fc.integer({ min: 0, max: 255 })).map(([a, b]) => `${a}.${b}.0.0/16`),
      fc.tuple(fc.integer({ min: 1, max: 223 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([a, b, c]) => `${a}.${b}.${c}.0/24`),
    );
  }
  return fc.oneof(fc.constantFrom('::/0', 'fd00::/8'), fc.integer({ min: 1, max: 0xffff }).map((h) => `2001:db8:${hex(h)}::/48`));
}

/** A pod CIDR of the node. */
export function podCIDR(family: IPFamily): fc.Arbitrary<string> {
  if (family === 'IPv4') return fc.integer({ min: 0, max: 255 }).map((n) => `10.244.${n}.0/24`);
  return fc.integer({ min: 1, max: 0xffff }).map((n) => `fd00:10:244:${hex(n)}::/64`);
}

/** Strings that are not an IP address at all, in the ways a client or attacker gets it wrong. */
export function invalidIP(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '10.0.0.256',
      '1.2.3',
      '1.2.3.4.5',
      '::g',
      '1:2:3:4:5:6:7:8:9',
      '10.96.0.0/12',
      ' 10.96.0.1',
      '10.96.0.1 ',
      '10.96.0.1\n',
      'localhost',
      'not-an-ip',
      '10.96.0.1 -j ACCEPT',
      '-1.0.0.0',
      'fd00::1%eth0',
    ),
    hostileString(),
  );
}

/** Strings that are not a CIDR. */
export function invalidCIDR(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('10.0.0.0/33', '10.0.0.0/-1', '300.0.0.0/8', 'fd00::/129', '10.0.0.0/8/8', '10.0.0.0/', '/24', '10.0.0.0/8 -j ACCEPT', 'any'),
    hostileString(),
  );
}
