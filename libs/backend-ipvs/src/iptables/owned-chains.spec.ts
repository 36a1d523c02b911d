import { IPVS_IPTABLES_CHAINS, IPVS_IPTABLES_JUMPS, ownedChainsOf } from './owned-chains.js';

// Upstream pkg/proxy/ipvs/proxier.go: iptablesJumpChain, iptablesChains (= iptablesCleanupChains).
describe('the chains and jumps IPVS mode owns', () => {
  it('links the owned chains from the built-in chains as upstream, each jump inserted first with its comment', () => {
    expect(IPVS_IPTABLES_JUMPS.map((j) => [j.table, j.from, j.to, j.comment])).toEqual([
      ['nat', 'OUTPUT', 'KUBE-SERVICES', 'kubernetes service portals'],
      ['nat', 'PREROUTING', 'KUBE-SERVICES', 'kubernetes service portals'],
      ['nat', 'POSTROUTING', 'KUBE-POSTROUTING', 'kubernetes postrouting rules'],
      ['filter', 'FORWARD', 'KUBE-FORWARD', 'kubernetes forwarding rules'],
      ['filter', 'INPUT', 'KUBE-NODE-PORT', 'kubernetes health check rules'],
      ['filter', 'INPUT', 'KUBE-PROXY-FIREWALL', 'kube-proxy firewall rules'],
      ['filter', 'FORWARD', 'KUBE-PROXY-FIREWALL', 'kube-proxy firewall rules'],
      ['filter', 'INPUT', 'KUBE-IPVS-FILTER', 'kubernetes ipvs access filter'],
      ['filter', 'OUTPUT', 'KUBE-IPVS-OUT-FILTER', 'kubernetes ipvs access filter'],
    ]);
    for (const j of IPVS_IPTABLES_JUMPS) {
      expect(j.args).toEqual(['-m', 'comment', '--comment', j.comment, '-j', j.to]);
      expect(j.position).toBe('-I');
    }
  });

  it('owns five nat and six filter chains, in upstream order, and every jump targets one of them', () => {
    expect(ownedChainsOf('nat')).toEqual(['KUBE-SERVICES', 'KUBE-POSTROUTING', 'KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-MARK-MASQ']);
    expect(ownedChainsOf('filter')).toEqual(['KUBE-FORWARD', 'KUBE-NODE-PORT', 'KUBE-PROXY-FIREWALL', 'KUBE-SOURCE-RANGES-FIREWALL', 'KUBE-IPVS-FILTER', 'KUBE-IPVS-OUT-FILTER']);
    expect(IPVS_IPTABLES_CHAINS).toHaveLength(11);
    for (const j of IPVS_IPTABLES_JUMPS) expect(ownedChainsOf(j.table as 'nat' | 'filter')).toContain(j.to);
  });
});
