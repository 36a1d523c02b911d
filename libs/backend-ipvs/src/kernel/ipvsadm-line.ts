/**
 * One ipvsadm rule line (the `--save -n` / `--restore` notation) as data: the command, the virtual
 * service it names and, as the command takes them, the service's options or one real server. The
 * save parser (ipvsadm-save.ts) reads `-A`/`-a` lines with it and the in-memory kernel applies
 * `-A -E -D -a -e -d` with it, so both read the text exactly one way. Defaults are ipvsadm's own
 * for options a line leaves out (scheduler wlc, forwarding -g, weight 1, no persistence); our
 * renderer (batch/ipvsadm-text.ts) always writes them out.
 *
 * Options we never write but ipvsadm prints for rules others made (`-M`, `--pe`, `-o`, `-x`, `-y`,
 * `--tun-*`) are kept as printed in `otherOptions`. A firewall-mark service (`-f N [-6]`) is
 * returned as such, without address. Anything else throws IpvsadmLineError saying what is wrong.
 */
import { canonicalIP, joinHostPort, type Protocol } from '@kube-proxy/core';
import type { IpvsadmSchedulerFlag, RealServer } from '../state/ipvs-state.js';

export type IpvsadmCommand = '-A' | '-E' | '-D' | '-a' | '-e' | '-d';

export interface IpvsadmService {
  readonly protocol: Protocol;
  readonly address: string;
  readonly port: number;
  /** VirtualServer.key: `10.96.0.1:80/TCP`, `[fd00::1]:80/TCP`. */
  readonly key: string;
}

export interface IpvsadmServiceOptions {
  readonly scheduler: string;
  readonly flags: readonly IpvsadmSchedulerFlag[];
  readonly persistenceTimeout: number;
  readonly otherOptions?: readonly string[];
}

export interface IpvsadmLine {
  readonly command: IpvsadmCommand;
  /** The service, or the firewall mark of a `-f` service. */
  readonly service: IpvsadmService | { readonly fwmark: number };
  /** -A / -E only. */
  readonly options?: IpvsadmServiceOptions;
  /** -a / -e / -d only (for -d only address, port and key matter). */
  readonly server?: RealServer;
}

export class IpvsadmLineError extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'IpvsadmLineError';
  }
}

export const IPVSADM_DEFAULT_SCHEDULER = 'wlc';

const COMMANDS: ReadonlySet<string> = new Set<IpvsadmCommand>(['-A', '-E', '-D', '-a', '-e', '-d']);
const PROTOCOL_OPTION: Readonly<Record<string, Protocol>> = { '-t': 'TCP', '-u': 'UDP', '--sctp-service': 'SCTP' };
const FLAGS: ReadonlySet<string> = new Set<IpvsadmSchedulerFlag>(['mh-port', 'mh-fallback', 'sh-fallback', 'sh-port', 'flag-1', 'flag-2', 'flag-3']);
/** Service options we never write: name → whether a value follows. */
const OTHER_SERVICE_OPTIONS: Readonly<Record<string, boolean>> = { '-M': true, '--pe': true, '-o': false };
/** Real server options we never write: name → whether a value follows. */
const OTHER_SERVER_OPTIONS: Readonly<Record<string, boolean>> = {
  '-x': true, '-y': true, '--tun-type': true, '--tun-port': true, '--tun-nocsum': false, '--tun-csum': false, '--tun-remcsum': false,
};
const FORWARDING: Readonly<Record<string, 'masq' | 'route' | 'tunnel'>> = { '-m': 'masq', '-g': 'route', '-i': 'tunnel' };

function fail(why: string): never {
  throw new IpvsadmLineError(why);
}

/** `10.96.0.1:80` / `[fd00::1]:80` → canonical address and port. */
function hostPort(text: string, what: string): { address: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)):([0-9]{1,5})$/.exec(text);
  const address = m === null ? undefined : canonicalIP(m[1] ?? m[2]);
  if (m === null || address === undefined || Number(m[3]) > 65535 || (m[1] !== undefined) !== address.includes(':')) {
    fail(`${what} ${JSON.stringify(text.slice(0, 80))} is not ADDRESS:PORT (IPv6 in brackets)`);
  }
  return { address, port: Number(m[3]) };
}

function integer(text: string, max: number, what: string): number {
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) > max) fail(`${what} ${JSON.stringify(text.slice(0, 40))} is not a number up to ${max}`);
  return Number(text);
}

class Tokens {
  private i = 0;
  constructor(private readonly list: readonly string[]) {}
  get done(): boolean {
    return this.i >= this.list.length;
  }
  peek(): string | undefined {
    return this.list[this.i];
  }
  next(what: string): string {
    if (this.done) fail(`${what} is missing`);
    return this.list[this.i++];
  }
}

function readService(t: Tokens): IpvsadmLine['service'] {
  const option = t.next('the service (-t, -u, --sctp-service or -f)');
  if (option === '-f') {
    const fwmark = integer(t.next('the -f firewall mark'), 0xffffffff, 'firewall mark');
    if (t.peek() === '-6') t.next('-6');
    return { fwmark };
  }
  const protocol = PROTOCOL_OPTION[option];
  if (protocol === undefined) fail(`${JSON.stringify(option.slice(0, 40))} is not a service option (-t, -u, --sctp-service, -f)`);
  const { address, port } = hostPort(t.next(`the ${option} address`), 'service address');
  return { protocol, address, port, key: `${joinHostPort(address, port)}/${protocol}` };
}

function readServiceOptions(t: Tokens): IpvsadmServiceOptions {
  let scheduler = IPVSADM_DEFAULT_SCHEDULER;
  let flags: IpvsadmSchedulerFlag[] = [];
  let persistenceTimeout = 0;
  const other: string[] = [];
  while (!t.done) {
    const option = t.next('an option');
    if (option === '-s') {
      scheduler = t.next('the -s scheduler');
      if (!/^[a-z]{1,15}$/.test(scheduler)) fail(`scheduler ${JSON.stringify(scheduler.slice(0, 40))} is not a scheduler name`);
    } else if (option === '-p') {
      persistenceTimeout = integer(t.next('the -p timeout'), 0xffffffff, 'persistence timeout');
      if (persistenceTimeout === 0) fail('persistence timeout 0');
    } else if (option === '-b') {
      const names = t.next('the -b flags').split(',');
      for (const n of names) if (!FLAGS.has(n)) fail(`scheduler flag ${JSON.stringify(n.slice(0, 40))} is unknown`);
      flags = names as IpvsadmSchedulerFlag[];
    } else if (Object.hasOwn(OTHER_SERVICE_OPTIONS, option)) {
      other.push(OTHER_SERVICE_OPTIONS[option] ? `${option} ${t.next(`the ${option} value`)}` : option);
    } else {
      fail(`${JSON.stringify(option.slice(0, 40))} is not a virtual server option`);
    }
  }
  return other.length > 0 ? { scheduler, flags, persistenceTimeout, otherOptions: other } : { scheduler, flags, persistenceTimeout };
}

function readServer(t: Tokens, command: IpvsadmCommand): RealServer {
  const r = t.next('-r');
  if (r !== '-r') fail(`expected -r, found ${JSON.stringify(r.slice(0, 40))}`);
  const { address, port } = hostPort(t.next('the -r address'), 'real server address');
  let forwarding: 'masq' | 'route' | 'tunnel' = 'route';
  let weight = 1;
  const other: string[] = [];
  while (!t.done) {
    const option = t.next('an option');
    if (command === '-d') fail(`${JSON.stringify(option.slice(0, 40))}: -d takes no options`);
    if (Object.hasOwn(FORWARDING, option)) forwarding = FORWARDING[option];
    else if (option === '-w') weight = integer(t.next('the -w weight'), 65535, 'weight');
    else if (Object.hasOwn(OTHER_SERVER_OPTIONS, option)) other.push(OTHER_SERVER_OPTIONS[option] ? `${option} ${t.next(`the ${option} value`)}` : option);
    else fail(`${JSON.stringify(option.slice(0, 40))} is not a real server option`);
  }
  return {
    address,
    port,
    weight,
    key: joinHostPort(address, port),
    ...(forwarding === 'masq' ? {} : { forwarding }),
    ...(other.length > 0 ? { otherOptions: other } : {}),
  };
}

/** Parses one non-empty rule line (see the header). */
export function parseIpvsadmLine(line: string): IpvsadmLine {
  const t = new Tokens(line.trim().split(/\s+/));
  const command = t.next('the command');
  if (!COMMANDS.has(command)) fail(`${JSON.stringify(command.slice(0, 40))} is not -A, -E, -D, -a, -e or -d`);
  const cmd = command as IpvsadmCommand;
  const service = readService(t);
  if (cmd === '-A' || cmd === '-E') return { command: cmd, service, options: readServiceOptions(t) };
  if (cmd === '-D') {
    if (!t.done) fail(`${JSON.stringify(String(t.peek()).slice(0, 40))}: -D takes no options`);
    return { command: cmd, service };
  }
  return { command: cmd, service, server: readServer(t, cmd) };
}
