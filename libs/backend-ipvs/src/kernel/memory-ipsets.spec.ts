import { IpsetRestoreError, MemoryIpsets } from './memory-ipsets.js';

const CREATE_P4 = 'create P4 hash:ip,port family inet hashsize 1024 maxelem 65536\n';

function applied(script: string): Record<string, string[]> {
  const m = new MemoryIpsets();
  m.apply(script);
  return Object.fromEntries(m.save());
}

function failure(m: MemoryIpsets, script: string): IpsetRestoreError {
  try {
    m.apply(script);
  } catch (e) {
    if (e instanceof IpsetRestoreError) return e;
    throw e;
  }
  throw new Error('expected the script to fail');
}

describe('MemoryIpsets (ipset restore -exist as ipset 7.17 did in the QEMU guest)', () => {
  it('normalises entries to what ipset save printed: default tcp, bare bitmap ports, lower-case IPv6, masked nets, bare host nets', () => {
    expect(
      applied(
        [
          'create N4 hash:ip,port,net family inet hashsize 1024 maxelem 65536',
          'create N6 hash:ip,port,net family inet6 hashsize 1024 maxelem 65536',
          CREATE_P4.trim(),
          'create B bitmap:port range 0-65535',
          'create I6 hash:ip family inet6 hashsize 1024 maxelem 65536',
          'create L6 hash:ip,port,ip family inet6 hashsize 1024 maxelem 65536',
          'add N4 203.0.113.1,tcp:80,10.1.2.3/8',
          'add N4 203.0.113.1,tcp:80,192.0.2.7/32',
          'add N6 2001:db8::1,tcp:80,2001:db8:FFFF::1/48',
          'add N6 2001:db8::1,tcp:80,2001:db8::7/128',
          'add P4 10.96.0.1,80',
          'add P4 10.96.0.2,sctp:7777',
          'add B tcp:30080',
          'add B 30081',
          'add I6 FD00:0:0::A',
          'add L6 fd00::5,tcp:8080,fd00::5',
          '',
        ].join('\n'),
      ),
    ).toEqual({
      // The guest's `ipset save` printed exactly these entries (in hash order).
      N4: ['203.0.113.1,tcp:80,10.0.0.0/8', '203.0.113.1,tcp:80,192.0.2.7'],
      N6: ['2001:db8::1,tcp:80,2001:db8:ffff::/48', '2001:db8::1,tcp:80,2001:db8::7'],
      P4: ['10.96.0.1,tcp:80', '10.96.0.2,sctp:7777'],
      B: ['30080', '30081'],
      I6: ['fd00::a'],
      L6: ['fd00::5,tcp:8080,fd00::5'],
    });
  });

  it('accepts what -exist forgives: an existing set of the same type (options kept), a present entry, an absent entry deleted, an absent set destroyed', () => {
    const m = new MemoryIpsets();
    m.apply(CREATE_P4 + 'add P4 10.96.0.10,tcp:80\n');
    m.apply('create P4 hash:ip,port family inet hashsize 2048 maxelem 65536\nadd P4 10.96.0.10,tcp:80\nadd P4 10.96.0.13,tcp:80\ndel P4 10.96.9.9,tcp:80\ndestroy NEVER\n');
    expect(Object.fromEntries(m.save())).toEqual({ P4: ['10.96.0.10,tcp:80', '10.96.0.13,tcp:80'] });
  });

  it.each([
    ['a create of another type', 'create P4 hash:ip family inet hashsize 1024 maxelem 65536\n', 1, 'Set cannot be created: set with the same name already exists'],
    ['a flush of a missing set', 'flush NOPE\n', 1, 'The set with the given name does not exist'],
    ['an add to a missing set', 'add NOPE 10.96.0.1\n', 1, 'The set with the given name does not exist'],
    ['a del from a missing set', 'del NOPE 1.2.3.4\n', 1, 'The set with the given name does not exist'],
    ['an entry without its port', 'add P4 10.96.0.3,tcp:80\nadd P4 bogus\n', 2, 'Syntax error: Second element is missing from bogus.'],
    ['an IPv6 entry in an inet set', 'add P4 fd00::1,tcp:80\n', 1, 'Syntax error: cannot parse fd00::1: resolving to IPv4 address failed'],
    ['a /0 net (the kernel refuses it)', 'create N hash:ip,port,net family inet hashsize 1024 maxelem 65536\nadd N 1.2.3.4,tcp:80,0.0.0.0/0\n', 2, 'The value of the CIDR parameter of the IP address is invalid'],
    ['a bitmap port out of range', 'create B bitmap:port range 0-65535\nadd B 70000\n', 2, "Syntax error: '70000' is out of range 0-65535"],
  ])('fails at the line of %s, as the guest did', (_what, script, lineNo, reason) => {
    const m = new MemoryIpsets();
    m.apply(CREATE_P4);
    const e = failure(m, script);
    expect([e.lineNo, e.reason]).toEqual([lineNo, reason]);
  });

  it('stops at the first failing line: later lines are not applied', () => {
    const m = new MemoryIpsets();
    m.apply(CREATE_P4);
    failure(m, 'add P4 10.96.0.3,tcp:80\nadd NOPE 1.1.1.1\nadd P4 10.96.0.4,tcp:80\n');
    expect(m.save().get('P4')).not.toContain('10.96.0.4,tcp:80');
  });

  it('flushes and destroys one set or, without a name, all of them', () => {
    const m = new MemoryIpsets();
    m.apply(CREATE_P4 + 'create Q hash:ip family inet hashsize 1024 maxelem 65536\nadd P4 10.96.0.1,tcp:80\nadd Q 10.0.0.1\nflush P4\n');
    expect(Object.fromEntries(m.save())).toEqual({ P4: [], Q: ['10.0.0.1'] });
    m.apply('flush\n');
    expect(Object.fromEntries(m.save())).toEqual({ P4: [], Q: [] });
    m.apply('destroy Q\n');
    expect([...m.save().keys()]).toEqual(['P4']);
    m.apply('destroy\n');
    expect(m.save().size).toBe(0);
  });

  it('refuses commands and types it does not know', () => {
    expect(failure(new MemoryIpsets(), 'swap A B\n').reason).toMatch(/unknown command swap/);
    expect(failure(new MemoryIpsets(), 'create A list:set\n').reason).toMatch(/Unknown settype/);
  });
});
