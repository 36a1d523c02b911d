import { nullLogger, type Logger } from '@kube-proxy/core';
import { readServiceCIDR } from './read-service-cidr.js';
import { ServiceCIDRSet } from './service-cidr-set.js';

const cidr = (name: string, cidrs: unknown) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs } });

function rig() {
  const lists: Array<readonly string[]> = [];
  const warnings: Array<{ msg: string; meta: Record<string, unknown> | undefined }> = [];
  const logger: Logger = { ...nullLogger, warn: (msg, meta) => void warnings.push({ msg, meta }) };
  const set = new ServiceCIDRSet({ onServiceCIDRsChanged: (l) => void lists.push(l) }, logger);
  return { set, lists, warnings };
}

describe('readServiceCIDR', () => {
  it.each([
    ['one IPv4 CIDR', ['10.96.0.0/12']],
    ['one CIDR of each family', ['10.96.0.0/12', 'fd00:10:96::/112']],
  ])('accepts %s', (_, cidrs) => {
    expect(readServiceCIDR(cidr('kubernetes', cidrs))).toEqual({ ok: true, name: 'kubernetes', cidrs });
  });

  it.each([
    ['no cidrs', undefined, 'spec.cidrs must be a list'],
    ['cidrs not a list', '10.96.0.0/12', 'spec.cidrs must be a list'],
    ['an empty list', [], 'one or two entries, has 0'],
    ['three entries', ['10.96.0.0/12', 'fd00::/112', '10.200.0.0/16'], 'one or two entries, has 3'],
    ['a non-CIDR entry', ['10.96.0.0'], '"10.96.0.0" is not a valid CIDR'],
    ['a non-string entry', [12], '12 is not a valid CIDR'],
    ['host bits set', ['10.96.0.1/12'], 'not in canonical form (10.96.0.0/12)'],
    ['two of one family', ['10.96.0.0/12', '10.200.0.0/16'], 'at most one CIDR per IP family'],
  ])('refuses %s', (_, cidrs, error) => {
    const r = readServiceCIDR(cidr('bad', cidrs));
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toContain(error);
  });

  it('refuses an object without a name', () => {
    expect(readServiceCIDR({ spec: { cidrs: ['10.96.0.0/12'] } })).toEqual({ ok: false, error: 'metadata.name is missing' });
  });
});

describe('ServiceCIDRSet', () => {
  it('delivers nothing before synced(), then the initial list once, de-duplicated and sorted', () => {
    const { set, lists } = rig();
    set.set(cidr('b', ['10.96.0.0/12', 'fd00::/112']));
    set.set(cidr('a', ['10.96.0.0/12']));
    set.set(cidr('c', ['10.100.0.0/16']));
    set.flush();
    expect(lists).toEqual([]);
    set.synced();
    expect(lists).toEqual([['10.100.0.0/16', '10.96.0.0/12', 'fd00::/112']]);
  });

  it('says nothing after an empty initial list, and only on real changes afterwards', () => {
    const { set, lists } = rig();
    set.synced();
    expect(lists).toEqual([]);
    set.set(cidr('a', ['10.96.0.0/12']));
    set.flush();
    // A second object with the same CIDR, and a re-delivered unchanged object, change nothing.
    set.set(cidr('b', ['10.96.0.0/12']));
    set.set(cidr('a', ['10.96.0.0/12']));
    set.flush();
    set.remove(cidr('a', []));
    set.flush();
    set.remove(cidr('b', []));
    set.flush();
    expect(lists).toEqual([['10.96.0.0/12'], []]);
  });

  it('skips a malformed object with one warning naming it; the others keep working', () => {
    const { set, lists, warnings } = rig();
    const bad = cidr('broken', ['not-a-cidr']);
    set.set(bad);
    set.set(bad);
    set.set(cidr('kubernetes', ['10.96.0.0/12']));
    set.synced();
    expect(lists).toEqual([['10.96.0.0/12']]);
    expect(warnings).toEqual([{ msg: 'Skipping invalid ServiceCIDR', meta: { kind: 'ServiceCIDR', object: 'broken', error: 'spec.cidrs[0]: "not-a-cidr" is not a valid CIDR' } }]);
  });

  it('keeps the last valid CIDRs of an object that turns malformed, until it is deleted', () => {
    const { set, lists, warnings } = rig();
    set.set(cidr('k', ['10.96.0.0/12']));
    set.synced();
    set.set(cidr('k', 'garbage'));
    set.flush();
    expect(warnings.map((w) => w.msg)).toEqual(['Skipping invalid ServiceCIDR; keeping its last valid version']);
    set.remove(cidr('k', 'garbage'));
    set.flush();
    expect(lists).toEqual([['10.96.0.0/12'], []]);
  });

  it('contains a throwing handler', () => {
    const errors: string[] = [];
    const logger: Logger = { ...nullLogger, error: (m) => void errors.push(m) };
    const set = new ServiceCIDRSet({ onServiceCIDRsChanged: () => { throw new Error('boom'); } }, logger);
    set.set(cidr('k', ['10.96.0.0/12']));
    expect(() => set.synced()).not.toThrow();
    expect(errors).toEqual(['Handler failed']);
  });
});
