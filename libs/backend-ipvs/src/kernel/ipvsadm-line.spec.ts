import { parseIpvsadmLine } from './ipvsadm-line.js';

describe('parseIpvsadmLine', () => {
  it('reads the edit and delete forms ipvsadm --restore takes, in our notation', () => {
    expect(parseIpvsadmLine('-E -u [fd00::1]:53 -s sh -p 5')).toEqual({
      command: '-E',
      service: { protocol: 'UDP', address: 'fd00::1', port: 53, key: '[fd00::1]:53/UDP' },
      options: { scheduler: 'sh', flags: [], persistenceTimeout: 5 },
    });
    expect(parseIpvsadmLine('-D --sctp-service 10.0.0.1:7777')).toEqual({ command: '-D', service: { protocol: 'SCTP', address: '10.0.0.1', port: 7777, key: '10.0.0.1:7777/SCTP' } });
    expect(parseIpvsadmLine('-e -t 10.0.0.1:80 -r 10.1.1.1:8080 -m -w 0').server).toEqual({ address: '10.1.1.1', port: 8080, weight: 0, key: '10.1.1.1:8080' });
    expect(parseIpvsadmLine('-d -t 10.0.0.1:80 -r 10.1.1.1:8080').server).toMatchObject({ key: '10.1.1.1:8080' });
  });

  it("applies ipvsadm's defaults for options a line leaves out: scheduler wlc, forwarding -g (route), weight 1", () => {
    expect(parseIpvsadmLine('-A -t 10.0.0.1:80').options).toEqual({ scheduler: 'wlc', flags: [], persistenceTimeout: 0 });
    expect(parseIpvsadmLine('-a -t 10.0.0.1:80 -r 10.1.1.1:80').server).toEqual({ address: '10.1.1.1', port: 80, weight: 1, key: '10.1.1.1:80', forwarding: 'route' });
  });

  it('reads firewall-mark services as such (IPv4 and -6)', () => {
    expect(parseIpvsadmLine('-A -f 7 -s rr').service).toEqual({ fwmark: 7 });
    expect(parseIpvsadmLine('-a -f 7 -6 -r [fd00::1]:80 -g -w 1').service).toEqual({ fwmark: 7 });
  });

  it.each([
    ['-D with options', '-D -t 10.0.0.1:80 -s rr', /-D takes no options/],
    ['-d with options', '-d -t 10.0.0.1:80 -r 10.1.1.1:80 -m', /-d takes no options/],
    ['a server line without -r', '-a -t 10.0.0.1:80 -m -w 1', /expected -r/],
    ['a zero persistence timeout', '-A -t 10.0.0.1:80 -s rr -p 0', /persistence timeout 0/],
    ['a scheduler name with other characters', '-A -t 10.0.0.1:80 -s r;r', /not a scheduler name/],
    ['a weight out of range', '-a -t 10.0.0.1:80 -r 10.1.1.1:80 -m -w 70000', /not a number up to 65535/],
    ['no service at all', '-A', /the service .* is missing/],
  ])('refuses %s', (_what, line, message) => {
    expect(() => parseIpvsadmLine(line)).toThrow(message);
  });
});
