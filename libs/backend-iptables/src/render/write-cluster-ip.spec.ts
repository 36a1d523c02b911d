import { plan, writerFixture } from './testing/writer-fixtures.js';
import { writeClusterIPCapture, writeClusterIPMasquerade } from './write-cluster-ip.js';

const PROTO = '-m tcp -p tcp';

describe('cluster-IP writer', () => {
  it('captures the cluster IP to the internal policy chain the plan names', () => {
    for (const kind of ['cluster', 'local'] as const) {
      const f = writerFixture();
      writeClusterIPCapture(f.w, plan({ internalEndpoints: kind }), f.chains, PROTO);
      const target = kind === 'local' ? f.chains.svl : f.chains.svc;
      expect(f.text()).toEqual({
        nServices: `-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j ${target}\n`,
      });
    }
  });

  it('writes the plan’s verdict in filter KUBE-SERVICES when internal traffic has nothing to reach', () => {
    const f = writerFixture();
    writeClusterIPCapture(f.w, plan({ internalReachable: false, internalVerdict: 'reject' }), f.chains, PROTO);
    expect(f.text()).toEqual({
      fServices: '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j REJECT\n',
    });
  });

  it('masquerades all, off-cluster only (by the detector), or not at all, as planned', () => {
    const head = (chain: string) => `-A ${chain} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80`;
    const all = writerFixture();
    writeClusterIPMasquerade(all.w, plan({ internalMasquerade: 'all' }), all.chains, PROTO, true);
    expect(all.text().natRules).toBe(`${head(all.chains.svc)} -j KUBE-MARK-MASQ\n`);
    const off = writerFixture();
    writeClusterIPMasquerade(off.w, plan({ internalMasquerade: 'off-cluster' }), off.chains, PROTO, true);
    expect(off.text().natRules).toBe(`${head(off.chains.svc)} ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ\n`);
    const none = writerFixture();
    writeClusterIPMasquerade(none.w, plan({ internalMasquerade: 'none' }), none.chains, PROTO, true);
    expect(none.text()).toEqual({});
  });
});
