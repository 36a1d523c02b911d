import { parseProcNetIpVs } from './proc-net-ip-vs.js';

/**
 * /proc/net/ip_vs on Debian's 6.1 kernel in the QEMU guest while a node client held one connection
 * through 10.96.0.20:80 (NAT to 127.0.0.1:18080) and a SYN had gone to 10.96.0.10:80.
 */
const CAPTURED = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port Forward Weight ActiveConn InActConn
TCP  0A600014:0050 rr  
  -> 7F000001:46A0      Masq    1      1          0         
TCP  0A60001E:0050 sed  
  -> 0AF40707:0050      Tunnel  1      0          0         
TCP  0A60000A:0050 rr  
  -> 0AF40105:1F90      Masq    1      1          0         
TCP  0A60002B:0050 rr  
TCP  0A600028:0050 rr  
TCP  0A600029:0050 rr  
UDP  0A600035:0035 rr ops  persistent 150000 FFFFFF00
UDP  0A600036:0035 rr  persistent 15000 FFFFFFFF
TCP  [fd00:0010:0096:0000:0000:0000:0000:000a]:01BB rr persistent 7500 40000000
  -> [fd00:0010:0244:0000:0000:0000:0000:0005]:20FB      Masq    1      0          0         
FWM  00000007 rr 
  -> 0AF40109:0050      Route   1      0          0         
`;

/** The same guest a moment later (the client had closed: the connection is inactive), plus SCTP and weight 0 from another boot. */
const CAPTURED_LATER = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port Forward Weight ActiveConn InActConn
UDP  [fd00:0000:0000:0000:0000:0000:0000:0053]:0035 sh 
TCP  0A60000A:0050 rr  
  -> 0AF40137:1F90      Masq    1      0          0         
  -> 0AF40206:1F90      Masq    0      0          0         
TCP  0A600014:0050 rr  
  -> 7F000001:46A0      Masq    1      0          1         
SCTP  0A60004D:1E61 mh  persistent 2700000 FFFFFFFF
  -> 0AF40108:1B58      Masq    1      0          0         
`;

function plain(c: ReturnType<typeof parseProcNetIpVs>): Record<string, Record<string, [number, number]>> {
  return Object.fromEntries([...c].map(([vs, m]) => [vs, Object.fromEntries([...m].map(([rs, n]) => [rs, [n.active, n.inactive]]))]));
}

describe('parseProcNetIpVs', () => {
  it('turns hex addresses and ports into VirtualServer / RealServer keys with active and inactive counts', () => {
    expect(plain(parseProcNetIpVs(CAPTURED))).toEqual({
      '10.96.0.20:80/TCP': { '127.0.0.1:18080': [1, 0] },
      '10.96.0.30:80/TCP': { '10.244.7.7:80': [0, 0] },
      '10.96.0.10:80/TCP': { '10.244.1.5:8080': [1, 0] },
      '10.96.0.43:80/TCP': {},
      '10.96.0.40:80/TCP': {},
      '10.96.0.41:80/TCP': {},
      '10.96.0.53:53/UDP': {},
      '10.96.0.54:53/UDP': {},
      '[fd00:10:96::a]:443/TCP': { '[fd00:10:244::5]:8443': [0, 0] },
    });
  });

  it('reads the inactive column, SCTP, weight-0 servers and IPv6 services in full hex notation', () => {
    expect(plain(parseProcNetIpVs(CAPTURED_LATER))).toEqual({
      '[fd00::53]:53/UDP': {},
      '10.96.0.10:80/TCP': { '10.244.1.55:8080': [0, 0], '10.244.2.6:8080': [0, 0] },
      '10.96.0.20:80/TCP': { '127.0.0.1:18080': [0, 1] },
      '10.96.0.77:7777/SCTP': { '10.244.1.8:7000': [0, 0] },
    });
  });

  it('reads the header alone (IPVS loaded, no services) as an empty map', () => {
    expect(parseProcNetIpVs(CAPTURED.split('\n').slice(0, 3).join('\n') + '\n').size).toBe(0);
  });

  it.each([
    ['a real server before any service', '  -> 0AF40105:1F90      Masq    1      1          0\n', /line 1 .*before any virtual server/],
    ['a service with a decimal address', 'TCP  10.96.0.1:80 rr\n', /expected PROTOCOL HEXADDR:PORT/],
    ['a real server without counts', 'TCP  0A60000A:0050 rr\n  -> 0AF40105:1F90      Masq    1\n', /line 2 .*ACTIVE INACTIVE/],
    ['an unknown protocol', 'ICMP  0A60000A:0050 rr\n', /neither a virtual server/],
  ])('throws naming the line for %s', (_what, text, message) => {
    expect(() => parseProcNetIpVs(text)).toThrow(message);
  });
});
