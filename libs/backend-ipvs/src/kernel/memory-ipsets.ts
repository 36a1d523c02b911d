/**
 * The ipsets of the in-memory kernel: applies `ipset restore -exist` scripts line by line as ipset
 * 7.17 did in the QEMU guest, and stores entries in the notation `ipset save` prints them back.
 * What was measured there, and is reproduced here:
 * - the script stops at the first failing line, with `Error in line N: …` (earlier lines stay
 *   applied here; the real tool may also drop not-yet-sent earlier lines on a syntax error, so a
 *   caller must re-read after any failure either way);
 * - under -exist: `create` of an existing set of the same type succeeds and keeps the set (even
 *   with other hashsize/maxelem), of another type fails; `add` of a present entry, `del` of an
 *   absent one and `destroy` of an absent set succeed; `add`/`del`/`flush` on a missing set fail;
 * - entries are normalised as save prints them: canonical lower-case addresses, `IP,80` becomes
 *   `IP,tcp:80`, bitmap `tcp:30080` becomes `30080`, a hash:ip,port,net net has its host bits
 *   cleared and a full-length prefix printed as the bare address (`192.0.2.7/32` → `192.0.2.7`),
 *   and a /0 net is refused by the kernel;
 * - an address of the other family fails;
 * - measured with ipset 7.17 on this project's host kernel: an all-zero address is refused by
 *   hash:ip ("Null-valued element, cannot be stored in a hash type of set") and by hash:ip,port
 *   ("Kernel error received: Invalid argument"); hash:ip,port,ip takes it.
 * Not modelled: a set referenced by an iptables rule cannot be destroyed (the in-memory kernel has
 * no iptables), and only the set types of the catalogue (plus hash:net) exist.
 */
import { canonicalIP, parseCIDR, type IPFamily } from '@kube-proxy/core';

type SetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'hash:net' | 'bitmap:port';
const TYPES: ReadonlySet<string> = new Set<SetType>(['hash:ip', 'hash:ip,port', 'hash:ip,port,ip', 'hash:ip,port,net', 'hash:net', 'bitmap:port']);

interface MemorySet {
  readonly type: SetType;
  readonly family: IPFamily;
  /** bitmap:port only. */
  readonly range: readonly [number, number];
  readonly entries: Set<string>;
}

export class IpsetRestoreError extends Error {
  constructor(
    readonly lineNo: number,
    readonly reason: string,
  ) {
    super(`ipset restore: Error in line ${lineNo}: ${reason}`);
    this.name = 'IpsetRestoreError';
  }
}

class LineFailure extends Error {}

function fail(reason: string): never {
  throw new LineFailure(reason);
}

function address(text: string, family: IPFamily): string {
  const a = canonicalIP(text);
  if (a === undefined || a.includes(':') !== (family === 'IPv6')) {
    fail(`Syntax error: cannot parse ${text}: resolving to ${family} address failed`);
  }
  return a;
}

function protoPort(text: string): string {
  const m = /^(?:(tcp|udp|sctp):)?([0-9]{1,5})$/i.exec(text);
  if (m === null || Number(m[2]) > 65535) fail(`Syntax error: cannot parse '${text}' as a protocol and port`);
  return `${(m[1] ?? 'tcp').toLowerCase()}:${Number(m[2])}`;
}

function net(text: string, family: IPFamily): string {
  const slash = text.indexOf('/');
  if (slash < 0) return address(text, family);
  const cidr = parseCIDR(text);
  if (cidr === undefined || cidr.family !== family) fail(`Syntax error: cannot parse ${text}: resolving to ${family} address failed`);
  if (cidr.prefixLength === 0) fail('The value of the CIDR parameter of the IP address is invalid');
  const full = family === 'IPv4' ? 32 : 128;
  return cidr.prefixLength === full ? cidr.text.slice(0, cidr.text.indexOf('/')) : cidr.text;
}

function isZero(text: string | undefined): boolean {
  const a = canonicalIP(text ?? '');
  return a === '0.0.0.0' || a === '::';
}

/** The entry as `ipset save` would print it, or a LineFailure. */
function normaliseEntry(set: MemorySet, entry: string): string {
  const parts = entry.split(',');
  const want = (n: number): void => {
    if (parts.length < n) fail(`Syntax error: Second element is missing from ${entry}.`);
    if (parts.length > n) fail(`Syntax error: Elem separator in ${entry}, but settype ${set.type} supports none.`);
  };
  switch (set.type) {
    case 'bitmap:port': {
      want(1);
      const m = /^(?:(?:tcp|udp|sctp):)?([0-9]{1,5})$/i.exec(entry);
      const port = m === null ? NaN : Number(m[1]);
      if (!(port >= set.range[0] && port <= set.range[1])) fail(`Syntax error: '${entry}' is out of range ${set.range[0]}-${set.range[1]}`);
      return String(port);
    }
    case 'hash:ip':
      want(1);
      if (isZero(entry)) fail('Null-valued element, cannot be stored in a hash type of set');
      return address(entry, set.family);
    case 'hash:net':
      want(1);
      return net(entry, set.family);
    case 'hash:ip,port': {
      want(2);
      const normal = `${address(parts[0], set.family)},${protoPort(parts[1])}`;
      if (isZero(parts[0])) fail('Kernel error received: Invalid argument');
      return normal;
    }
    case 'hash:ip,port,ip':
      want(3);
      return `${address(parts[0], set.family)},${protoPort(parts[1])},${address(parts[2], set.family)}`;
    case 'hash:ip,port,net':
      want(3);
      return `${address(parts[0], set.family)},${protoPort(parts[1])},${net(parts[2], set.family)}`;
  }
}

function parseCreate(words: readonly string[]): MemorySet {
  const type = words[2];
  if (type === undefined || !TYPES.has(type)) fail(`Syntax error: Unknown settype ${JSON.stringify(String(type))}`);
  let family: IPFamily = 'IPv4';
  let range: [number, number] = [0, 65535];
  for (let i = 3; i < words.length; i += 2) {
    const [option, value] = [words[i], words[i + 1]];
    if (value === undefined) fail(`Syntax error: option ${option} has no value`);
    if (option === 'family' && (value === 'inet' || value === 'inet6')) family = value === 'inet6' ? 'IPv6' : 'IPv4';
    else if (option === 'range' && type === 'bitmap:port' && /^[0-9]{1,5}-[0-9]{1,5}$/.test(value)) range = value.split('-').map(Number) as [number, number];
    else if (['hashsize', 'maxelem', 'bucketsize', 'timeout'].includes(option) && /^[0-9]{1,10}$/.test(value)) continue;
    else if (option === 'initval' && /^0x[0-9a-f]{1,8}$/i.test(value)) continue;
    else fail(`Syntax error: ${JSON.stringify(option)} ${JSON.stringify(value)} is not an option of ${type}`);
  }
  return { type: type as SetType, family, range, entries: new Set() };
}

export class MemoryIpsets {
  private readonly sets = new Map<string, MemorySet>();

  /** Applies an `ipset restore -exist` script; throws IpsetRestoreError at the first failing line. */
  apply(script: string): void {
    const lines = script.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    lines.forEach((line, index) => {
      try {
        this.applyLine(line);
      } catch (e) {
        if (e instanceof LineFailure) throw new IpsetRestoreError(index + 1, e.message);
        throw e;
      }
    });
  }

  private existing(name: string | undefined): MemorySet {
    const set = name === undefined ? undefined : this.sets.get(name);
    if (set === undefined) fail('The set with the given name does not exist');
    return set;
  }

  private applyLine(line: string): void {
    const words = line.trim().split(/\s+/);
    const [verb, name] = words;
    if (verb === '' || verb === undefined) return;
    if (verb !== 'create' && verb !== 'add' && verb !== 'del' && verb !== 'flush' && verb !== 'destroy') fail(`Syntax error: unknown command ${verb}`);
    if (name !== undefined && !/^[A-Za-z0-9_.:-]{1,31}$/.test(name)) fail(`Syntax error: setname '${name}' is invalid`);
    if (verb === 'create') {
      if (name === undefined) fail('Syntax error: missing setname');
      const set = parseCreate(words);
      const old = this.sets.get(name);
      if (old === undefined) this.sets.set(name, set);
      else if (old.type !== set.type || old.family !== set.family) fail('Set cannot be created: set with the same name already exists');
      return;
    }
    if (verb === 'add' || verb === 'del') {
      const set = this.existing(name);
      if (words.length !== 3) fail(`Syntax error: ${verb} takes one entry`);
      const entry = normaliseEntry(set, words[2]);
      if (verb === 'add') set.entries.add(entry);
      else set.entries.delete(entry);
      return;
    }
    if (words.length > 2) fail(`Syntax error: ${verb} takes at most a set name`);
    const targets = name === undefined ? [...this.sets.keys()] : [name];
    for (const n of targets) {
      if (verb === 'flush') this.existing(n).entries.clear();
      else this.sets.delete(n); // destroy: absent is fine under -exist
    }
  }

  /** Set name → entries, in creation order (entries in insertion order), as `ipset save` lists them. */
  save(): Map<string, string[]> {
    return new Map([...this.sets].map(([name, set]) => [name, [...set.entries]]));
  }
}
