import { buildTracePacket, familyOfDestination, TraceInputError } from './trace-packet.js';

const NODE = ['192.168.0.2', '10.0.0.1', 'fd00::2'];

describe('buildTracePacket', () => {
  it('a source among the node addresses is locally generated (OUTPUT), and has no input interface', () => {
    const p = buildTracePacket({ from: '10.0.0.1', to: '10.96.0.10:80', inInterface: 'eth0' }, NODE);
    expect(p).toEqual({ family: 'IPv4', protocol: 'TCP', sourceIP: '10.0.0.1', destIP: '10.96.0.10', destPort: 80, locallyGenerated: true });
  });

  it('any other source arrives (PREROUTING), with its port, protocol and interface', () => {
    const p = buildTracePacket({ from: '10.244.1.7:34567', to: '10.96.0.10:53', protocol: 'udp', inInterface: 'cni0' }, NODE);
    expect(p).toEqual({
      family: 'IPv4',
      protocol: 'UDP',
      sourceIP: '10.244.1.7',
      sourcePort: 34567,
      destIP: '10.96.0.10',
      destPort: 53,
      locallyGenerated: false,
      inInterface: 'cni0',
    });
  });

  it('IPv6: bare or bracketed source, bracketed destination, canonical spelling compared with the node addresses', () => {
    expect(buildTracePacket({ from: 'FD00:0::2', to: '[fd00:10:96::a]:443', protocol: 'SCTP' }, NODE)).toEqual({
      family: 'IPv6',
      protocol: 'SCTP',
      sourceIP: 'fd00::2',
      destIP: 'fd00:10:96::a',
      destPort: 443,
      locallyGenerated: true,
    });
    expect(buildTracePacket({ from: '[2001:db8::9]:1000', to: '[fd00:10:96::a]:443' }, NODE)).toMatchObject({ sourceIP: '2001:db8::9', sourcePort: 1000, locallyGenerated: false });
  });

  it.each([
    [{ to: '10.96.0.10:80' }, '--from=IP[:PORT] is required (the source address)'],
    [{ from: '1.2.3.4' }, '--to=IP:PORT is required (the destination)'],
    [{ from: '1.2.3', to: '10.96.0.10:80' }, 'malformed --from "1.2.3": want IP or IP:PORT ([IPv6]:PORT)'],
    [{ from: '1.2.3.4', to: '10.96.0.10' }, 'malformed --to "10.96.0.10": want IP:PORT ([IPv6]:PORT) with a port in 1-65535'],
    [{ from: '1.2.3.4', to: '10.96.0.10:0' }, 'malformed --to "10.96.0.10:0": want IP:PORT ([IPv6]:PORT) with a port in 1-65535'],
    [{ from: '1.2.3.4', to: 'fd00::1:80' }, 'malformed --to "fd00::1:80": want IP:PORT ([IPv6]:PORT) with a port in 1-65535'],
    [{ from: '1.2.3.4', to: '[fd00::1]:80' }, '--from 1.2.3.4 and --to fd00::1 are of different IP families'],
    [{ from: '1.2.3.4', to: '10.96.0.10:80', protocol: 'ICMP' }, 'unknown protocol "ICMP": want TCP, UDP or SCTP'],
  ])('%j → %s', (input, message) => {
    expect(() => buildTracePacket(input, NODE)).toThrow(new TraceInputError(message));
  });

  it('familyOfDestination reads the family from --to, undefined when malformed', () => {
    expect(familyOfDestination('[fd00::1]:80')).toBe('IPv6');
    expect(familyOfDestination('10.0.0.1:80')).toBe('IPv4');
    expect(familyOfDestination('nonsense')).toBeUndefined();
  });
});
