/**
 * parseProcNetIpVs: the connection counts in /proc/net/ip_vs, keyed like VirtualServer.key and
 * RealServer.key, for graceful termination (a weight-0 real server is deleted once both counts are
 * zero). The kernel prints addresses and ports in hex (what the QEMU guest's 6.1 kernel printed;
 * fixtures in the spec):
 *   TCP  0A60000A:0050 rr
 *     -> 0AF40105:1F90      Masq    1      1          0
 *   TCP  [fd00:0010:0096:0000:0000:0000:0000:000a]:01BB rr persistent 7500 40000000
 *     -> [fd00:0010:0244:0000:0000:0000:0000:0005]:20FB      Masq    1      0          0
 *   FWM  00000007 rr
 * The three header lines are skipped; firewall-mark services (no address) and their real servers
 * too. Anything else throws, naming the line.
 */
import { canonicalIP, joinHostPort, type Protocol } from '@kube-proxy/core';
import type { IpvsConnections, RealServerConnections } from './ipvs-kernel.js';

const PROTOCOLS: ReadonlySet<string> = new Set<Protocol>(['TCP', 'UDP', 'SCTP']);

export class ProcNetIpVsParseError extends Error {
  constructor(lineNo: number, line: string, why: string) {
    super(`/proc/net/ip_vs line ${lineNo} ${JSON.stringify(line.slice(0, 200))}: ${why}`);
    this.name = 'ProcNetIpVsParseError';
  }
}

/** `0A60000A:0050` or `[fd00:0010:…:000a]:01BB` → `10.96.0.10:80` / `[fd00:10:96::a]:443`. */
function hexHostPort(text: string): string | undefined {
  const m = /^(?:([0-9A-Fa-f]{8})|\[([0-9A-Fa-f:]+)\]):([0-9A-Fa-f]{4})$/.exec(text);
  if (m === null) return undefined;
  const port = parseInt(m[3], 16);
  let address: string | undefined;
  if (m[1] !== undefined) {
    const n = parseInt(m[1], 16);
    address = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
  } else {
    address = canonicalIP(m[2]);
    if (address === undefined || !address.includes(':')) return undefined;
  }
  return joinHostPort(address, port);
}

function count(text: string | undefined): number | undefined {
  return text !== undefined && /^[0-9]{1,10}$/.test(text) ? Number(text) : undefined;
}

/** Virtual server key → real server key → active / inactive connections (see the header). */
export function parseProcNetIpVs(text: string): IpvsConnections {
  const result = new Map<string, Map<string, RealServerConnections>>();
  let current: Map<string, RealServerConnections> | null | undefined; // null: inside a firewall-mark service
  text.split('\n').forEach((raw, index) => {
    const fail: (why: string) => never = (why) => {
      throw new ProcNetIpVsParseError(index + 1, raw, why);
    };
    const line = raw.trim();
    if (line === '') return;
    if (line.startsWith('IP Virtual Server version') || line.startsWith('Prot LocalAddress:Port') || line.startsWith('-> RemoteAddress:Port')) return;
    const fields = line.split(/\s+/);
    if (fields[0] === '->') {
      if (current === undefined) fail('a real server before any virtual server');
      if (current === null) return;
      const rs = hexHostPort(fields[1]);
      const active = count(fields[4]);
      const inactive = count(fields[5]);
      if (rs === undefined || active === undefined || inactive === undefined) fail('expected -> HEXADDR:PORT FORWARD WEIGHT ACTIVE INACTIVE');
      current.set(rs, { active, inactive });
    } else if (fields[0] === 'FWM') {
      current = null;
    } else if (PROTOCOLS.has(fields[0])) {
      const vs = hexHostPort(fields[1] ?? '');
      if (vs === undefined) fail('expected PROTOCOL HEXADDR:PORT SCHEDULER');
      const key = `${vs}/${fields[0]}`;
      current = result.get(key);
      if (current === undefined) result.set(key, (current = new Map()));
    } else {
      fail('neither a virtual server, a real server nor a header line');
    }
  });
  return result;
}
