import { durationSeconds, parseOwnTableText } from './own-table-text.js';

describe('reading the terse text listing of our table', () => {
  it('nft durations as seconds', () => {
    expect(durationSeconds('3h')).toBe(10800);
    expect(durationSeconds('10m')).toBe(600);
    expect(durationSeconds('1d2h46m40s')).toBe(96400);
    expect(durationSeconds('600s')).toBe(600);
    expect(durationSeconds('3h x')).toBeNaN();
  });

  it('chains with base hooks and rules (comments of chains left out), named sets with timeouts', () => {
    const text = `table ip kube-proxy {
	comment "rules for kube-proxy"
	set affinity-A-ns/s/tcp/p__10.0.0.1/80 {
		type ipv4_addr
		size 65535
		flags dynamic,timeout
		timeout 10m
	}

	set cluster-ips {
		type ipv4_addr
		comment "Active ClusterIPs"
	}

	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority dstnat - 10; policy accept;
		ct state new jump firewall-check
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}

	chain "service-X-ns/s/tcp/p" {
		ip saddr @affinity-A-ns/s/tcp/p__10.0.0.1/80 goto endpoint-A
		numgen random mod 1 vmap { 0 : goto endpoint-A }
	}
}
`;
    const t = parseOwnTableText(text);
    expect(t.chains).toEqual([
      { name: 'filter-prerouting-pre-dnat', base: { type: 'filter', hook: 'prerouting', priority: -110 } },
      { name: 'reject-chain' },
      { name: 'service-X-ns/s/tcp/p' },
    ]);
    expect([...t.rules]).toEqual([
      ['filter-prerouting-pre-dnat', ['ct state new jump firewall-check']],
      ['reject-chain', ['reject']],
      ['service-X-ns/s/tcp/p', ['ip saddr @affinity-A-ns/s/tcp/p__10.0.0.1/80 goto endpoint-A', 'numgen random mod 1 vmap { 0 : goto endpoint-A }']],
    ]);
    expect([...t.sets]).toEqual([['affinity-A-ns/s/tcp/p__10.0.0.1/80', 600], ['cluster-ips', 0]]);
  });

  it('refuses what it cannot place rather than guessing', () => {
    expect(() => parseOwnTableText('table ip kube-proxy {\n\tchain x {\n\t\treject\n')).toThrow(/ends inside/);
    expect(() => parseOwnTableText('table ip kube-proxy {\n\tflowtable f {\n\t}\n}\n')).toThrow(/unexpected line/);
  });
});
