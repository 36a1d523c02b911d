import { elementsFromJson } from './kernel-table-state.js';

// Shapes as nft 1.0.6 prints them with -j (captured from a table this backend loaded).
const META = '{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}';

describe('reading an existing kube-proxy table from nft -j', () => {
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

  it('set elements', () => {
    const set = `{"nftables": [${META}, {"set": {"family": "ip", "name": "cluster-ips", "table": "kube-proxy", "type": "ipv4_addr", "elem": ["10.96.0.10", "10.96.0.11"]}}]}`;
    expect([...elementsFromJson(set, 'set', 'ip', 'kube-proxy').keys()]).toEqual(['10.96.0.10', '10.96.0.11']);
  });

  it('skips element shapes it does not write rather than guessing', () => {
    const text = `{"nftables": [${META}, {"map": {"family": "ip", "name": "m", "table": "kube-proxy", "elem": [[{"range": ["1.0.0.0", "2.0.0.0"]}, {"drop": null}]]}}]}`;
    expect(elementsFromJson(text, 'map', 'ip', 'kube-proxy').size).toBe(0);
  });
});
