import { endpoint, plan, writerFixture } from './testing/writer-fixtures.js';
import { writeEndpointChains, writePolicyChains } from './write-endpoints.js';

const A = endpoint('10.180.0.1');
const B = endpoint('10.180.0.2');

describe('endpoints writer', () => {
  it('balances the cluster set with upstream probabilities and checks affinity first when the plan has it', () => {
    const f = writerFixture();
    const p = plan({ clusterEndpoints: [A, B], reachableEndpoints: [A, B], sessionAffinity: true, affinitySeconds: 300 });
    writePolicyChains(f.w, p, f.chains, true);
    const { svc } = f.chains;
    const sepA = f.w.names.sepOf(f.chains, A.key);
    const sepB = f.w.names.sepOf(f.chains, B.key);
    expect(f.text()).toEqual({
      natChains: `:${svc} - [0:0]\n`,
      natRules:
        `-A ${svc} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:8080" -m recent --name ${sepA} --rcheck --seconds 300 --reap -j ${sepA}\n` +
        `-A ${svc} -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:8080" -m recent --name ${sepB} --rcheck --seconds 300 --reap -j ${sepB}\n` +
        `-A ${svc} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:8080" -m statistic --mode random --probability 0.5000000000 -j ${sepA}\n` +
        `-A ${svc} -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:8080" -j ${sepB}\n`,
    });
  });

  it('writes the SVL chain only when the plan balances local endpoints', () => {
    const f = writerFixture();
    writePolicyChains(f.w, plan({ balancesClusterEndpoints: false, balancesLocalEndpoints: true, localEndpoints: [A] }), f.chains, true);
    expect(f.text()).toEqual({ natChains: `:${f.chains.svl} - [0:0]\n`, natRules: `-A ${f.chains.svl} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:8080" -j ${f.w.names.sepOf(f.chains, A.key)}\n` });
  });

  it('one SEP chain per reachable endpoint: hairpin masquerade, then DNAT (comments dropped in large-cluster mode)', () => {
    const f = writerFixture({ largeClusterMode: true });
    writeEndpointChains(f.w, plan(), f.chains, '-m tcp -p tcp', true);
    const sep = f.w.names.sepOf(f.chains, A.key);
    expect(f.text()).toEqual({
      natChains: `:${sep} - [0:0]\n`,
      natRules: `-A ${sep} -s 10.180.0.1 -j KUBE-MARK-MASQ\n-A ${sep} -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:8080\n`,
    });
    expect(f.w.activeNatChains.has(sep)).toBe(true);
  });

  it('an unchanged service (partial sync) keeps its SEP chains active and counted, unwritten', () => {
    const f = writerFixture();
    writeEndpointChains(f.w, plan({ reachableEndpoints: [A, B] }), f.chains, '-m tcp -p tcp', false);
    expect(f.text()).toEqual({});
    expect([f.w.skippedNatChains, f.w.skippedNatRules, f.w.activeNatChains.size]).toEqual([2, 4, 2]);
  });
});
