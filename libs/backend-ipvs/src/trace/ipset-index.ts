/**
 * The ipsets of an IPVS node as a packet tracer asks them: "does `-m set --match-set NAME FLAGS`
 * hold for this packet, and which entry made it hold?". Built from `ipset save` text (our dry-run's
 * `# ipset` section is the same notation): the entries through kernel/ipset-save.ts, the set types
 * from the `create` lines, because an entry's meaning depends on its set's type (a bare `30080` is a
 * port of a bitmap:port set, a bare address a member of a hash:ip set).
 *
 * xt_set's direction flags pick, dimension by dimension, the packet's source or destination: with
 * `src,dst` a hash:ip,port entry matches the packet's source address and destination port. Entries
 * are indexed by their canonical key, so a lookup costs one hash probe per set (the sets of a node
 * with 10,000 Services hold 10,000 entries); hash:ip,port,net sets (source ranges) are scanned.
 * An entry's `comment "…"` (ipset's per-entry comment; upstream writes none) names its Service.
 */
import { canonicalIP, cidrContains, type TracePacket } from '@kube-proxy/core';
import { parseIpsetSave } from '../kernel/ipset-save.js';

/** One entry as `ipset save` printed it, and the Service its comment names, if any. */
export interface IpsetEntry {
  readonly set: string;
  /** The entry as printed after `add SET ` (options such as `comment` included). */
  readonly text: string;
  readonly comment?: string;
}

interface IndexedSet {
  readonly name: string;
  readonly type: string;
  /** Canonical key → entry (hash:ip, hash:ip,port, hash:ip,port,ip, bitmap:port). */
  readonly byKey: Map<string, IpsetEntry>;
  /** hash:ip,port,net: canonical `ip,proto:port` → [net, entry]. */
  readonly nets: Map<string, [string, IpsetEntry][]>;
  readonly entries: IpsetEntry[];
}

const CREATE_LINE = /^create (\S+) (\S+)/;

/** `comment "text"` among an entry's options. */
function entryComment(options: string): string | undefined {
  const m = /(?:^|\s)comment "((?:[^"\\]|\\.)*)"/.exec(options);
  return m === null ? undefined : m[1];
}

/** `tcp:80` / `80` → [proto, port]; ipset's default protocol is tcp. */
function protoPort(text: string): [string, number] | undefined {
  const colon = text.indexOf(':');
  const proto = colon < 0 ? 'tcp' : text.slice(0, colon).toLowerCase();
  const port = Number(colon < 0 ? text : text.slice(colon + 1));
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? [proto, port] : undefined;
}

/** The canonical lookup key of an entry's first word for `type`, or undefined when it does not parse. */
function entryKey(type: string, element: string): { key: string; net?: string } | undefined {
  const parts = element.split(',');
  if (type === 'bitmap:port') return /^\d+$/.test(element) ? { key: String(Number(element)) } : undefined;
  const ip = canonicalIP(parts[0] ?? '');
  if (ip === undefined) return undefined;
  if (type === 'hash:ip') return { key: ip };
  const pp = protoPort(parts[1] ?? '');
  if (pp === undefined) return undefined;
  const base = `${ip},${pp[0]}:${pp[1]}`;
  if (type === 'hash:ip,port') return { key: base };
  if (type === 'hash:ip,port,ip') {
    const ip2 = canonicalIP(parts[2] ?? '');
    return ip2 === undefined ? undefined : { key: `${base},${ip2}` };
  }
  if (type === 'hash:ip,port,net') return parts[2] === undefined ? undefined : { key: base, net: parts[2] };
  return undefined;
}

/** A type for a set without a create line (hand-made text): guessed from the entry's shape. */
function typeOfEntry(element: string): string {
  const parts = element.split(',');
  if (parts.length === 1) return /^\d+$/.test(element) ? 'bitmap:port' : 'hash:ip';
  if (parts.length === 2) return 'hash:ip,port';
  return (parts[2] ?? '').includes('/') ? 'hash:ip,port,net' : 'hash:ip,port,ip';
}

export class IpsetIndex {
  private readonly sets = new Map<string, IndexedSet>();

  /** `ipset save` text (several saves may be concatenated). */
  static fromSave(text: string): IpsetIndex {
    const types = new Map<string, string>();
    for (const line of text.split('\n')) {
      const m = CREATE_LINE.exec(line);
      if (m !== null) types.set(m[1] as string, m[2] as string);
    }
    const index = new IpsetIndex();
    for (const [name, entries] of parseIpsetSave(text)) index.addSet(name, types.get(name), entries);
    return index;
  }

  private addSet(name: string, declaredType: string | undefined, texts: readonly string[]): void {
    const set: IndexedSet = { name, type: declaredType ?? typeOfEntry((texts[0] ?? '').split(/\s/)[0] ?? ''), byKey: new Map(), nets: new Map(), entries: [] };
    this.sets.set(name, set);
    for (const text of texts) {
      const space = text.indexOf(' ');
      const element = space < 0 ? text : text.slice(0, space);
      const comment = space < 0 ? undefined : entryComment(text.slice(space + 1));
      const entry: IpsetEntry = { set: name, text, ...(comment === undefined ? {} : { comment }) };
      set.entries.push(entry);
      const key = entryKey(set.type, element);
      if (key === undefined) continue;
      if (key.net === undefined) set.byKey.set(key.key, entry);
      else set.nets.set(key.key, [...(set.nets.get(key.key) ?? []), [key.net, entry]]);
    }
  }

  has(name: string): boolean {
    return this.sets.has(name);
  }

  names(): string[] {
    return [...this.sets.keys()];
  }

  /** Every entry of `name`, in save order ([] for an unknown set). */
  entries(name: string): readonly IpsetEntry[] {
    return this.sets.get(name)?.entries ?? [];
  }

  /**
   * Entries with a comment that hold the packet's destination (`dst,dst` / `dst`): how a Service is
   * named when the sets' entries carry comments (ours and upstream's do not).
   */
  serviceEntries(packet: TracePacket): IpsetEntry[] {
    const out: IpsetEntry[] = [];
    for (const set of this.sets.values()) {
      if (set.type !== 'hash:ip,port' && set.type !== 'bitmap:port') continue;
      const entry = this.lookup(set.name, set.type === 'bitmap:port' ? 'dst' : 'dst,dst', packet);
      if (entry?.comment !== undefined) out.push(entry);
    }
    return out;
  }

  /**
   * The entry that makes `--match-set NAME FLAGS` hold for the packet (negation aside), or undefined.
   * A flag `src` takes the packet's source address (or port), `dst` its destination.
   */
  lookup(name: string, flags: string, packet: TracePacket): IpsetEntry | undefined {
    const set = this.sets.get(name);
    if (set === undefined) return undefined;
    const dirs = flags.split(',');
    const ipOf = (i: number): string => (dirs[i] === 'src' ? packet.sourceIP : packet.destIP);
    const portOf = (i: number): number | undefined => (dirs[i] === 'src' ? packet.sourcePort : packet.destPort);
    const proto = packet.protocol.toLowerCase();
    switch (set.type) {
      case 'bitmap:port':
        return set.byKey.get(String(portOf(0)));
      case 'hash:ip':
        return set.byKey.get(ipOf(0));
      case 'hash:ip,port':
        return set.byKey.get(`${ipOf(0)},${proto}:${portOf(1)}`);
      case 'hash:ip,port,ip':
        return set.byKey.get(`${ipOf(0)},${proto}:${portOf(1)},${ipOf(2)}`);
      case 'hash:ip,port,net': {
        const nets = set.nets.get(`${ipOf(0)},${proto}:${portOf(1)}`) ?? [];
        const ip = ipOf(2);
        return nets.find(([net]) => (net.includes('/') ? cidrContains(net, ip) : canonicalIP(net) === ip))?.[1];
      }
      default:
        return undefined;
    }
  }
}
