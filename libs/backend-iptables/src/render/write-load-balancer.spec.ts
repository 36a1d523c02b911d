import { plan, writerFixture } from './testing/writer-fixtures.js';
import { writeFirewallChain, writeLoadBalancerIPs } from './write-load-balancer.js';

const FIREWALLED = plan({ loadBalancerIPs: ['1.2.3.4'], firewalled: true, firewallSourceRanges: ['203.0.113.0/25'] });

describe('load-balancer writer', () => {
  it('captures LB IPs through the FW chain when the plan is firewalled, and drops what it did not accept', () => {
    const f = writerFixture();
    writeLoadBalancerIPs(f.w, FIREWALLED, f.chains, '-m tcp -p tcp');
    const { fw } = f.chains;
    expect(f.text()).toEqual({
      nServices: `-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 loadbalancer IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j ${fw}\n`,
      fProxyFirewall: `-A KUBE-PROXY-FIREWALL -m comment --comment "ns1/svc1:p80 traffic not accepted by ${fw}" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP\n`,
    });
  });

  it('writes only the plan’s verdict for LB IPs that have nothing to reach', () => {
    const f = writerFixture();
    writeLoadBalancerIPs(f.w, plan({ loadBalancerIPs: ['1.2.3.4'], externalAccepted: false, externalReachable: false, externalVerdict: 'reject' }), f.chains, '-m tcp -p tcp');
    expect(f.text()).toEqual({
      fExternal: '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j REJECT\n',
    });
  });

  it('FW chain: the source ranges, then the LB IPs as sources only when the plan allows them, then the drop marker', () => {
    for (const allow of [false, true]) {
      const f = writerFixture();
      writeFirewallChain(f.w, { ...FIREWALLED, firewallAllowsLoadBalancerIPs: allow }, f.chains, true);
      const { fw, ext } = f.chains;
      const head = `-A ${fw} -m comment --comment "ns1/svc1:p80 loadbalancer IP"`;
      expect(f.text().natRules).toBe(
        `${head} -s 203.0.113.0/25 -j ${ext}\n` +
          (allow ? `${head} -s 1.2.3.4 -j ${ext}\n` : '') +
          `-A ${fw} -m comment --comment "other traffic to ns1/svc1:p80 will be dropped by KUBE-PROXY-FIREWALL"\n`,
      );
      expect(f.w.activeNatChains.has(fw)).toBe(true);
    }
  });

  it('FW chain of an unchanged service (partial sync) is kept and counted, not written', () => {
    const f = writerFixture();
    writeFirewallChain(f.w, { ...FIREWALLED, firewallAllowsLoadBalancerIPs: true }, f.chains, false);
    expect(f.text()).toEqual({});
    expect([f.w.skippedNatChains, f.w.skippedNatRules]).toEqual([1, 3]);
    expect(f.w.activeNatChains.has(f.chains.fw)).toBe(true);
  });

  it('no FW chain when the plan is not firewalled', () => {
    const f = writerFixture();
    writeFirewallChain(f.w, plan({ loadBalancerIPs: ['1.2.3.4'] }), f.chains, true);
    expect(f.text()).toEqual({});
    expect(f.w.activeNatChains.size).toBe(0);
  });
});
