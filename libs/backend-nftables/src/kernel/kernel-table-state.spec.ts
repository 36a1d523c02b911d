import { chainsFromJson, elementsFromJson, setsFromJson } from './kernel-table-state.js';

// Shapes as nft 1.0.6 prints them with -j (captured from a table this backend loaded).
const META = '{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}';

describe('reading an existing kube-proxy table from nft -j', () => {
  it('chains, with the hooks of base chains, of our table only', () => {
    const text = `{"nftables": [${META},
      {"chain": {"family": "ip", "table": "kube-proxy", "name": "filter-forward", "handle": 25, "type": "filter", "hook": "forward", "prio": 0, "policy": "accept"}},
      {"chain": {"family": "ip", "table": "kube-proxy", "name": "service-X-ns/s/tcp/p", "handle": 2}},
      {"chain": {"family": "ip", "table": "filter", "name": "INPUT", "handle": 1, "type": "filter", "hook": "input", "prio": 0}}]}`;
    expect(chainsFromJson(text, 'ip', 'kube-proxy')).toEqual([
      { name: 'filter-forward', base: { type: 'filter', hook: 'forward', priority: 0 } },
      { name: 'service-X-ns/s/tcp/p' },
    ]);
  });

  it('map elements as the bodies TableSync writes: concatenated keys, comments, verdicts', () => {
    const text = `{"nftables": [${META}, {"map": {"family": "ip", "name": "no-endpoint-services", "table": "kube-proxy", "map": "verdict", "elem": [
      [{"elem": {"val": {"concat": ["203.0.113.11", "tcp", 80]}, "comment": "shop/shop-local:http"}}, {"drop": null}],
      [{"elem": {"val": {"concat": ["10.96.0.99", "tcp", 80]}, "comment": "default/pending:http"}}, {"goto": {"target": "reject-chain"}}],
      [{"concat": ["tcp", 30080]}, {"goto": {"target": "external-G-default/web/tcp/http"}}]]}}]}`;
    expect([...elementsFromJson(text, 'map', 'ip', 'kube-proxy')]).toEqual([
      ['203.0.113.11 . tcp . 80', '203.0.113.11 . tcp . 80 comment "shop/shop-local:http" : drop'],
      ['10.96.0.99 . tcp . 80', '10.96.0.99 . tcp . 80 comment "default/pending:http" : goto reject-chain'],
      ['tcp . 30080', 'tcp . 30080 : goto external-G-default/web/tcp/http'],
    ]);
  });

  it('set elements, and named sets with their timeouts (anonymous ones left out)', () => {
    const set = `{"nftables": [${META}, {"set": {"family": "ip", "name": "cluster-ips", "table": "kube-proxy", "type": "ipv4_addr", "elem": ["10.96.0.10", "10.96.0.11"]}}]}`;
    expect([...elementsFromJson(set, 'set', 'ip', 'kube-proxy').keys()]).toEqual(['10.96.0.10', '10.96.0.11']);
    const sets = `{"nftables": [${META},
      {"set": {"family": "ip", "name": "affinity-A-ns/s/tcp/p__10.0.0.1/80", "table": "kube-proxy", "type": "ipv4_addr", "flags": ["timeout"], "timeout": 600}},
      {"set": {"family": "ip", "name": "__map12", "table": "kube-proxy", "type": "integer"}},
      {"set": {"family": "ip", "name": "cluster-ips", "table": "kube-proxy", "type": "ipv4_addr"}}]}`;
    expect([...setsFromJson(sets, 'ip', 'kube-proxy')]).toEqual([
      ['affinity-A-ns/s/tcp/p__10.0.0.1/80', 600],
      ['cluster-ips', 0],
    ]);
  });

  it('skips element shapes it does not write rather than guessing', () => {
    const text = `{"nftables": [${META}, {"map": {"family": "ip", "name": "m", "table": "kube-proxy", "elem": [[{"range": ["1.0.0.0", "2.0.0.0"]}, {"drop": null}]]}}]}`;
    expect(elementsFromJson(text, 'map', 'ip', 'kube-proxy').size).toBe(0);
  });
});
