import { plan, writerFixture } from './testing/writer-fixtures.js';
import { writeExternalChain } from './write-external-chain.js';

describe('external-chain writer', () => {
  it("'all': masquerades every external packet, then sends it to the external policy chain", () => {
    const f = writerFixture();
    writeExternalChain(f.w, plan({ externalMasquerade: 'all' }), f.chains, true);
    const { ext, svc } = f.chains;
    expect(f.text()).toEqual({
      natChains: `:${ext} - [0:0]\n`,
      natRules: `-A ${ext} -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ\n-A ${ext} -j ${svc}\n`,
    });
  });

  it("'local-sources': pods (if detectable) and the node go to the cluster chain, the node's traffic masqueraded; others to SVL", () => {
    for (const bypass of [true, false]) {
      const f = writerFixture();
      writeExternalChain(
        f.w,
        plan({ externalMasquerade: 'local-sources', podsBypassExternalPolicy: bypass, externalEndpoints: 'local' }),
        f.chains,
        true,
      );
      const { ext, svc, svl } = f.chains;
      expect(f.text().natRules).toBe(
        (bypass ? `-A ${ext} -m comment --comment "pod traffic for ns1/svc1:p80 external destinations" -s 10.0.0.0/8 -j ${svc}\n` : '') +
          `-A ${ext} -m comment --comment "masquerade LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ\n` +
          `-A ${ext} -m comment --comment "route LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j ${svc}\n` +
          `-A ${ext} -j ${svl}\n`,
      );
    }
  });

  it('no jump to the policy chain when external traffic from outside has nothing to reach', () => {
    const f = writerFixture();
    writeExternalChain(f.w, plan({ externalMasquerade: 'local-sources', externalReachable: false, externalVerdict: 'drop' }), f.chains, true);
    expect(f.text().natRules).not.toContain(`-A ${f.chains.ext} -j `);
  });

  it("'none': no EXT chain at all", () => {
    const f = writerFixture();
    writeExternalChain(f.w, plan({ externalMasquerade: 'none' }), f.chains, true);
    expect(f.text()).toEqual({});
    expect(f.w.activeNatChains.size).toBe(0);
  });

  it('an unchanged service (partial sync) keeps its EXT chain: counted with the rules it holds, not written', () => {
    const f = writerFixture();
    writeExternalChain(f.w, plan({ externalMasquerade: 'local-sources', podsBypassExternalPolicy: true }), f.chains, false);
    expect(f.text()).toEqual({});
    expect([f.w.skippedNatChains, f.w.skippedNatRules]).toEqual([1, 4]);
    expect(f.w.activeNatChains.has(f.chains.ext)).toBe(true);
  });
});
