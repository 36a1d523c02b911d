/*
 * Our proxier writes upstream's v1.33-v1.35 nftables layout; upstream's kube-proxy since v1.36 writes
 * the same Services differently (kubernetes pkg/proxy/nftables/proxier_test.go at edca5633…):
 *
 *   - no mark-for-masquerade chain: every `jump mark-for-masquerade` is an inline
 *     `mark set mark or MARK` (comment "masquerade" when the rule had none), and the per-service
 *     "masquerade off-cluster clients" rule is one `ip daddr @cluster-ips ip saddr != CIDR …` rule
 *     at the head of `services`;
 *   - masquerading is one rule on the mark plus one on the `hairpin-connections` set
 *     (endpoint . endpoint . protocol . port), instead of a hairpin rule per endpoint chain;
 *   - a Service without ClientIP affinity has no endpoint chains: its chain is one
 *     `meta l4proto P dnat ip addr . port to numgen random mod N map { i : IP . PORT , … }`.
 *
 * toUpstreamV136Layout rewrites our table's dump into that layout, so that upstream's packet-flow
 * tests can also be traced through v1.36-shaped rules. The rewrite is checked against upstream's
 * verbatim TestOverallNFTablesRules dump (src/trace/fixtures/upstream-v1.36-overall.nft): for that
 * test's Services it gives upstream's table line for line. Upstream's form under --masquerade-all
 * is not in any test it publishes; there the off-cluster rule becomes `ip daddr @cluster-ips mark set …`.
 * Upstream puts only this node's endpoints in hairpin-connections; our v1.33 table does not say which
 * endpoints are local, so `hairpins` chooses (every endpoint by default: a remote endpoint never sends
 * its own packets through this node, so no traced flow tells the two apart).
 */
const MARK_CHAIN = 'mark-for-masquerade';
const CLUSTER_MASQ_COMMENT = 'comment "masquerade clusterIP traffic from outside cluster"';

interface Line {
  readonly kind: string;
  readonly name: string;
  readonly rest: string;
}

function parseLine(line: string, prefix: string): Line | undefined {
  const m = /^add (table|chain|set|map|rule|element) (\S+ \S+)(?: (\S+))?(.*)$/.exec(line);
  if (!m || m[2] !== prefix) return undefined;
  return { kind: m[1]!, name: m[3] ?? '', rest: m[4]!.trim() };
}

/** `ip saddr 10.0.0.1 jump mark-for-masquerade` → `ip saddr 10.0.0.1 mark set mark or 0x4000 comment "masquerade"`. */
function inlineMark(rule: string, mark: string): string {
  const m = /^(.*?)\s*jump mark-for-masquerade(\s+comment "[^"]*")?$/.exec(rule);
  if (!m) return rule;
  const head = m[1] ? `${m[1]} ` : '';
  return `${head}mark set mark or ${mark}${m[2] ?? ' comment "masquerade"'}`;
}

interface Endpoint {
  readonly protocol: string;
  readonly ip: string;
  readonly port: string;
}

/** The endpoint a chain DNATs to (`meta l4proto tcp dnat to 10.0.0.1:80` / `to [fd00::1]:80`). */
function endpointOf(rules: readonly string[]): Endpoint | undefined {
  for (const r of rules) {
    const m = /^meta l4proto (\S+) dnat to (?:\[([^\]]+)\]|([^:\s]+)):(\d+)$/.exec(r);
    if (m) return { protocol: m[1]!, ip: m[2] ?? m[3]!, port: m[4]! };
  }
  return undefined;
}

class Rewriter {
  readonly rules = new Map<string, string[]>();
  readonly header: string[] = [];
  readonly elements: string[] = [];
  readonly hairpins = new Set<string>();
  readonly dropChains = new Set<string>([MARK_CHAIN]);
  mark = '0x4000';
  offClusterCIDR: string | undefined;
  masqueradeAll = false;

  constructor(
    private readonly prefix: string,
    private readonly addr: string,
    private readonly hairpinOf: (ip: string) => boolean,
  ) {}

  read(dump: string): void {
    for (const raw of dump.split('\n')) {
      const line = raw.trim();
      const l = line === '' || line.startsWith('#') ? undefined : parseLine(line, this.prefix);
      if (!l) continue;
      if (l.kind === 'rule') this.rules.set(l.name, [...(this.rules.get(l.name) ?? []), l.rest]);
      else if (l.kind === 'element') this.elements.push(line);
      else this.header.push(line);
      if (l.kind === 'chain' && !this.rules.has(l.name)) this.rules.set(l.name, []);
    }
    const m = /mark set mark or (\S+)/.exec(this.rules.get(MARK_CHAIN)?.[0] ?? '');
    if (m) this.mark = m[1]!;
  }

  /** A service chain: its off-cluster masquerade rule lifted to `services`, its endpoint chains folded into a DNAT map. */
  serviceChain(name: string): void {
    const rules = this.rules.get(name)!;
    const kept: string[] = [];
    for (const r of rules) {
      const masq = new RegExp(`^${this.addr} daddr \\S+ (?:${this.addr} saddr != (\\S+) )?jump ${MARK_CHAIN}$`).exec(r);
      if (masq) {
        if (masq[1]) this.offClusterCIDR = masq[1];
        else this.masqueradeAll = true;
      } else kept.push(r);
    }
    const vmap = kept.findIndex((r) => r.startsWith('numgen random mod '));
    const targets = vmap < 0 ? [] : [...kept[vmap]!.matchAll(/goto (\S+)/g)].map((t) => t[1]!);
    const endpoints = targets.map((t) => endpointOf(this.rules.get(t) ?? []));
    endpoints.forEach((e) => e && this.hairpinOf(e.ip) && this.hairpins.add(`${e.ip} . ${e.ip} . ${e.protocol} . ${e.port}`));
    if (vmap >= 0 && !kept.some((r) => r.includes(' @affinity-')) && endpoints.every((e) => e !== undefined)) {
      const map = endpoints.map((e, i) => `${i} : ${e!.ip} . ${e!.port}`).join(' , ');
      kept[vmap] = `meta l4proto ${endpoints[0]!.protocol} dnat ${this.addr} addr . port to numgen random mod ${endpoints.length} map { ${map} }`;
      targets.forEach((t) => this.dropChains.add(t));
    }
    this.rules.set(name, kept);
  }

  /** An endpoint chain still named by a kept rule (an affinity chain's) stays. */
  keepReferenced(): void {
    for (const [chain, rules] of this.rules) {
      if (this.dropChains.has(chain)) continue;
      for (const r of rules) for (const m of r.matchAll(/(?:goto|jump) (\S+)/g)) if (m[1] !== MARK_CHAIN) this.dropChains.delete(m[1]!);
    }
  }

  /** An endpoint chain that stays (ClientIP affinity): its hairpin rule is the set's job now. */
  endpointChain(name: string): void {
    const rules = this.rules.get(name)!;
    this.rules.set(name, rules.filter((r) => !new RegExp(`^${this.addr} saddr \\S+ jump ${MARK_CHAIN}$`).test(r)));
  }

  baseChains(): void {
    this.rules.set('masquerading', [
      `mark and ${this.mark} != 0 mark set mark xor ${this.mark} masquerade fully-random`,
      `ct status dnat ${this.addr} saddr . ${this.addr} daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random`,
    ]);
    const services = this.rules.get('services') ?? [];
    if (this.masqueradeAll) services.unshift(`${this.addr} daddr @cluster-ips mark set mark or ${this.mark} ${CLUSTER_MASQ_COMMENT}`);
    else if (this.offClusterCIDR) services.unshift(`${this.addr} daddr @cluster-ips ${this.addr} saddr != ${this.offClusterCIDR} mark set mark or ${this.mark} ${CLUSTER_MASQ_COMMENT}`);
    for (const [chain, rules] of this.rules) this.rules.set(chain, rules.map((r) => inlineMark(r, this.mark)));
  }

  write(): string {
    const out: string[] = [];
    const addrType = this.addr === 'ip' ? 'ipv4_addr' : 'ipv6_addr';
    for (const line of this.header) {
      const l = parseLine(line, this.prefix)!;
      if (l.kind === 'chain' && this.dropChains.has(l.name)) continue;
      out.push(line);
      if (l.kind === 'table') out.push(`add set ${this.prefix} hairpin-connections { type ${addrType} . ${addrType} . inet_proto . inet_service ; comment "service hairpin connections" ; }`);
    }
    for (const [chain, rules] of this.rules) if (!this.dropChains.has(chain)) for (const r of rules) out.push(`add rule ${this.prefix} ${chain} ${r}`);
    out.push(...this.elements);
    for (const h of this.hairpins) out.push(`add element ${this.prefix} hairpin-connections { ${h} }`);
    return out.join('\n') + '\n';
  }
}

/** Our table's dump (`add …` lines of one family's kube-proxy table) rewritten into upstream's v1.36+ layout. */
export function toUpstreamV136Layout(dump: string, family: 'ip' | 'ip6', hairpins: (endpointIP: string) => boolean = () => true): string {
  const r = new Rewriter(`${family} kube-proxy`, family, hairpins);
  r.read(dump);
  const chains = [...r.rules.keys()];
  // Local-policy chains (`local-…`) pick among the local endpoints the same way.
  for (const c of chains) if (c.startsWith('service-') || c.startsWith('local-')) r.serviceChain(c);
  r.keepReferenced();
  for (const c of chains) if (c.startsWith('endpoint-') && !r.dropChains.has(c)) r.endpointChain(c);
  r.baseChains();
  return r.write();
}
