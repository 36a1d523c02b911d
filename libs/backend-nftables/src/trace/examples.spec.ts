// The examples/ manifests as our --dry-run writes them and as nft 1.0.6 lists them once loaded into a
// kernel (fixtures made by loading the dry-run into a scratch network namespace): both forms of the
// same table must trace alike.
import { readFileSync } from 'node:fs';
import type { TracePacket } from '@kube-proxy/core';
import { nftablesTracer } from './nftables-tracer.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const NODE = { name: 'node-1', addresses: ['192.168.49.2'] };
const forms = {
  'dry-run script': nftablesTracer.fromDryRun(fixture('examples.dry-run.nft'), 'IPv4'),
  'nft list table': nftablesTracer.fromDryRun(fixture('examples.listing.nft'), 'IPv4'),
};

function pkt(sourceIP: string, destIP: string, destPort: number, extra: Partial<TracePacket> = {}): TracePacket {
  return { family: 'IPv4', protocol: 'TCP', sourceIP, destIP, destPort, locallyGenerated: NODE.addresses.includes(sourceIP), ...extra };
}

describe.each(Object.entries(forms))('examples/ traced from the %s', (_form, snapshot) => {
  const trace = (p: TracePacket) => nftablesTracer.trace(snapshot, p, NODE);

  it('sends a pod to every endpoint of a cluster IP, each with probability 1/3, unmasqueraded', () => {
    const t = trace(pkt('10.244.1.50', '10.96.0.10', 80));
    expect(t).toMatchObject({ verdict: 'DNAT', service: 'default/web:http', masquerade: false, endpoints: ['10.244.1.11:8080', '10.244.1.12:8080', '10.244.2.21:8080'] });
    expect(t.choices.map((c) => c.probability)).toEqual([0.333333, 0.333333, 0.333333]);
    expect(t.reason).toBe('default/web:http sends the connection to one of 3 endpoints');
    expect(t.path.map((s) => s.where)).toEqual([
      'ip kube-proxy/filter-prerouting-pre-dnat',
      'ip kube-proxy/nat-prerouting',
      'ip kube-proxy map service-ips element',
      'ip kube-proxy/services',
      // The service chain DNATs by its map: no endpoint chains without affinity (upstream v1.36+).
      'ip kube-proxy/service-SUSTUHLJ-default/web/tcp/http',
      'ip kube-proxy/filter-forward',
      'ip kube-proxy/filter-forward',
      // Postrouting runs too; neither masquerading rule matches an unmarked, non-hairpin packet.
      'ip kube-proxy/nat-postrouting',
    ]);
    expect(t.path.some((s) => s.where === 'ip kube-proxy map service-ips element' && s.rule.startsWith('10.96.0.10 . tcp . 80 : goto service-'))).toBe(true);
  });

  it('masquerades a hairpin connection (a pod reaching itself), by the hairpin-connections set', () => {
    const t = trace(pkt('10.244.1.11', '10.96.0.10', 80));
    expect(t).toMatchObject({ verdict: 'DNAT', masquerade: true, masqueradeReason: 'a pod reaching itself through the Service (hairpin) is masqueraded' });
    expect(t.path.some((s) => s.where === 'ip kube-proxy/masquerading' && s.rule.includes('@hairpin-connections'))).toBe(true);
    // 10.244.2.21 is on another node: not in the set, so reaching itself is not masqueraded here.
    expect(trace(pkt('10.244.2.21', '10.96.0.10', 80)).masquerade).toBe(false);
  });

  it('DNATs a single-endpoint Service without a map (kubernetes PR #140723 / #140960)', () => {
    // An external client to the external IP: masqueraded (policy Cluster), one endpoint.
    const t = trace(pkt('198.51.100.7', '192.0.2.50', 8080));
    expect(t).toMatchObject({ verdict: 'DNAT', service: 'default/api-ext:api', masquerade: true, endpoints: ['10.244.2.51:8080'] });
    expect(t.choices.map((c) => c.probability)).toEqual([1]);
    expect(t.path.some((s) => s.where === 'ip kube-proxy/service-5EBKJURJ-default/api-ext/tcp/api' && s.rule.includes('dnat to 10.244.2.51:8080'))).toBe(true);
    // A pod to the cluster IP: not masqueraded.
    expect(trace(pkt('10.244.1.50', '10.96.0.30', 8080))).toMatchObject({ verdict: 'DNAT', masquerade: false, endpoints: ['10.244.2.51:8080'] });
  });

  it('takes the OUTPUT path for the node itself, and masquerades NodePort traffic under policy Cluster', () => {
    const t = trace(pkt('192.168.49.2', '192.168.49.2', 30080));
    expect(t).toMatchObject({ verdict: 'DNAT', service: 'default/web-nodeport:http', masquerade: true, endpoints: ['10.244.1.11:8080', '10.244.2.21:8080'] });
    expect(t.path[0]!.where).toBe('ip kube-proxy/filter-output-pre-dnat');
  });

  it('rejects a Service with no endpoints, naming it', () => {
    const t = trace(pkt('10.244.1.50', '10.96.0.99', 80));
    expect(t).toMatchObject({ verdict: 'REJECT', endpoints: [], service: 'default/pending:http', reason: 'service default/pending has no ready endpoints for port default/pending:http' });
  });

  it('rejects an unused port of a cluster IP and drops an unallocated cluster IP', () => {
    expect(trace(pkt('10.244.1.50', '10.96.0.10', 81)).reason).toBe('cluster IP 10.96.0.10 belongs to a Service, but not on TCP port 81');
    expect(trace(pkt('10.244.1.50', '10.96.0.10', 81)).verdict).toBe('REJECT');
    expect(trace(pkt('10.244.1.50', '10.96.5.5', 80))).toMatchObject({ verdict: 'DROP', reason: 'cluster IP 10.96.5.5 is not allocated to any Service' });
  });

  it('drops a LoadBalancer client outside loadBalancerSourceRanges, and lets one inside through', () => {
    expect(trace(pkt('192.0.2.99', '203.0.113.10', 443))).toMatchObject({ verdict: 'DROP', reason: 'source 192.0.2.99 is outside loadBalancerSourceRanges of shop/shop:https' });
    expect(trace(pkt('198.51.100.7', '203.0.113.10', 443))).toMatchObject({ verdict: 'DNAT', masquerade: true, endpoints: ['10.244.1.31:8443', '10.244.2.32:8443'] });
  });

  it('keeps the source of external traffic under policy Local, sending it to the local endpoint only', () => {
    expect(trace(pkt('192.0.2.99', '203.0.113.11', 80))).toMatchObject({ verdict: 'DNAT', masquerade: false, endpoints: ['10.244.1.41:8080'] });
  });

  it('lists every endpoint of a ClientIP-affinity Service and notes the affinity', () => {
    const t = trace(pkt('10.244.1.50', '10.96.0.12', 80));
    expect(t.endpoints).toEqual(['10.244.1.11:8080', '10.244.1.12:8080']);
    expect(t.path.filter((s) => s.note?.startsWith('session affinity')).map((s) => s.service)).toEqual(['default/web-sticky:', 'default/web-sticky:']);
    expect(t.service).toBe('default/web-sticky:');
  });

  it('lets a packet that no Service rule matches pass: ACCEPT, no service', () => {
    expect(trace(pkt('10.244.1.50', '8.8.8.8', 53, { protocol: 'UDP' }))).toMatchObject({ verdict: 'ACCEPT', endpoints: [], service: null, masquerade: false, reason: 'no Service rule matches UDP 8.8.8.8:53; the packet passes unchanged' });
  });

  it('names the kernel objects of a Service', () => {
    const objects = nftablesTracer.objectsOf(snapshot, 'default/web');
    expect(objects).toContainEqual({ kind: 'chain', name: 'ip kube-proxy/service-SUSTUHLJ-default/web/tcp/http', rules: 1, endpoints: ['10.244.1.11:8080', '10.244.1.12:8080', '10.244.2.21:8080'] });
    expect(objects).toContainEqual({ kind: 'map element', name: 'ip kube-proxy map service-ips element 10.96.0.10 . tcp . 80', rules: 1 });
    // Its two ports' service chains; no endpoint chains without affinity.
    expect(objects.filter((o) => o.kind === 'chain')).toHaveLength(2);
  });
});

it('the two forms of the table hold the same rules', () => {
  const [a, b] = Object.values(forms).map((s) => (s as unknown as { ruleset: { chains: Map<string, { rules: string[] }> } }).ruleset);
  expect([...b!.chains.keys()].sort()).toEqual([...a!.chains.keys()].sort());
});
