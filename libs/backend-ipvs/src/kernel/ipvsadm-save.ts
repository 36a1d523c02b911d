/**
 * parseIpvsadmSave: `ipvsadm --save -n` text back into the VirtualServer values buildDesiredIpvsState
 * makes, so the proxier diffs the kernel against its desired state key for key. The notation is
 * what ipvsadm 1.31 printed on Debian's 6.1 kernel in the QEMU guest (fixtures in the spec):
 *   -A -t 10.96.0.10:80 -s rr [-p 600 [-M MASK]] [--pe sip] [-o] [-b mh-fallback,mh-port]
 *   -a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m|-g|-i -w 1 [--tun-type gue --tun-port 6080 --tun-nocsum]
 * -t TCP, -u UDP, --sctp-service SCTP; IPv6 in brackets. Each line is read by ipvsadm-line.ts:
 * addresses re-canonicalised with core's canonicalIP, keys built with joinHostPort, as the desired
 * state builds them.
 *
 * What others may have put there is kept, not judged: `-g` / `-i` servers carry `forwarding`, and
 * options we never write are kept as printed in `otherOptions`, so the proxier can leave such
 * servers alone or delete them by key. Firewall-mark services (`-A -f 7`) have no address or port,
 * cannot collide with any key of ours, and are skipped with their real servers. Any other line
 * (another command, an unknown option, a real server before its service) throws, naming the line.
 */
import type { IPFamily } from '@kube-proxy/core';
import type { RealServer, VirtualServer } from '../state/ipvs-state.js';
import { IpvsadmLineError, parseIpvsadmLine, type IpvsadmLine } from './ipvsadm-line.js';

export class IpvsadmSaveParseError extends Error {
  constructor(lineNo: number, line: string, why: string) {
    super(`ipvsadm --save line ${lineNo} ${JSON.stringify(line.slice(0, 200))}: ${why}`);
    this.name = 'IpvsadmSaveParseError';
  }
}

interface Draft {
  readonly vs: Omit<VirtualServer, 'realServers'>;
  readonly realServers: Map<string, RealServer>;
}

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** The virtual servers of `family` in `ipvsadm --save -n` text, sorted by key, their real servers too. */
export function parseIpvsadmSave(text: string, family: IPFamily): VirtualServer[] {
  const drafts = new Map<string, Draft>();
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    const fail: (why: string) => never = (why) => {
      throw new IpvsadmSaveParseError(index + 1, raw, why);
    };
    let parsed: IpvsadmLine;
    try {
      parsed = parseIpvsadmLine(raw);
    } catch (e) {
      if (e instanceof IpvsadmLineError) fail(e.message);
      throw e;
    }
    const { command, service } = parsed;
    if (command !== '-A' && command !== '-a') fail(`${command} is not a line ipvsadm --save prints`);
    if ('fwmark' in service) return;
    if (parsed.options !== undefined) {
      if (drafts.has(service.key)) fail(`virtual server ${service.key} listed twice`);
      drafts.set(service.key, { vs: { ...service, ...parsed.options }, realServers: new Map() });
      return;
    }
    const draft = drafts.get(service.key);
    const rs = parsed.server;
    if (draft === undefined) fail(`a real server of ${service.key}, which no -A line listed before`);
    if (rs === undefined) fail('no real server'); // not reached: -a lines always carry one
    if (draft.realServers.has(rs.key)) fail(`real server ${rs.key} listed twice`);
    draft.realServers.set(rs.key, rs);
  });
  const wantV6 = family === 'IPv6';
  return [...drafts.values()]
    .filter((d) => d.vs.address.includes(':') === wantV6)
    .map((d): VirtualServer => {
      const { otherOptions, ...rest } = d.vs;
      return { ...rest, realServers: [...d.realServers.values()].sort(byKey), ...(otherOptions === undefined ? {} : { otherOptions }) };
    })
    .sort(byKey);
}
