/**
 * Pins two of the renderer's documented differences from upstream (README, "Where we differ from
 * upstream"): the defaults of the options upstream always knows, and the deterministic order of
 * stale-chain deletions.
 */
import type { RenderOptions } from './render-ruleset.js';
import { renderRuleset } from './render-ruleset.js';
import { ChainNameCache } from './chain-names.js';
import { fakeProxierOptions, FakeProxier, makeTestService } from './testing/fake-proxier.js';
import { writeStaleChainDeletions } from './write-stale-chains.js';
import { LineBuffer } from './line-buffer.js';

describe('options upstream always knows, left out', () => {
  it('render as nfacct none, conntrackTCPLiberal false and nodeIP null', () => {
    const fp = new FakeProxier();
    fp.addService(
      makeTestService('ns1', 'svc1', (svc) => {
        svc.spec.type = 'LoadBalancer';
        svc.spec.clusterIP = '172.30.0.41';
        svc.spec.ports = [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }];
        svc.status.loadBalancer = { ingress: [{ ip: '1.2.3.4' }] };
        svc.spec.loadBalancerSourceRanges = ['192.168.0.0/16'];
      }),
    );
    fp.setEndpoints('ns1', 'svc1', 'p80', 80, [{ ip: '10.180.0.1' }]);
    const input = { serviceMap: fp.serviceMap, endpointsMap: fp.endpointsMap, changedServices: null, existingNatChains: null };

    const omitted: RenderOptions = fakeProxierOptions('IPv4', { nodeIP: '192.168.0.2' });
    delete omitted.nfacct;
    delete omitted.conntrackTCPLiberal;
    delete omitted.nodeIP;
    const explicit = fakeProxierOptions('IPv4', {
      nfacct: { ctStateInvalidDropped: false, localhostNodePortAccepted: false },
      conntrackTCPLiberal: false,
      nodeIP: null,
    });

    const withDefaults = renderRuleset(input, omitted, new ChainNameCache()).payload;
    expect(withDefaults).toBe(renderRuleset(input, explicit, new ChainNameCache()).payload);
    // The defaults are upstream's behaviour without counters and node IP: an INVALID drop without
    // an nfacct match, and no "allow from node" source in the KUBE-FW chain.
    expect(withDefaults).toContain('-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n');
    const fw = (payload: string) => payload.split('\n').filter((l) => l.startsWith('-A KUBE-FW-'));
    expect(fw(withDefaults).some((l) => l.includes('-s 1.2.3.4 '))).toBe(false);
    // Whereas a node IP inside the source ranges lets the node's own requests (from the LB IP) through.
    const withNodeIP = renderRuleset(input, fakeProxierOptions('IPv4', { nodeIP: '192.168.0.2' }), new ChainNameCache()).payload;
    expect(fw(withNodeIP).some((l) => l.includes('-s 1.2.3.4 '))).toBe(true);
  });
});

describe('stale chain deletion', () => {
  it('writes the flushing chain lines and -X lines sorted by chain name, whatever the set order', () => {
    const chains = new LineBuffer(1 << 10);
    const rules = new LineBuffer(1 << 10);
    const existing = new Set(['KUBE-SVC-BBBB', 'KUBE-SEP-ZZZZ', 'KUBE-FORWARD', 'KUBE-EXT-AAAA', 'KUBE-SEP-KEEP']);
    const deleted = writeStaleChainDeletions(existing, new Set(['KUBE-SEP-KEEP']), chains, rules);
    expect(deleted).toBe(3);
    expect(chains.toString()).toBe(':KUBE-EXT-AAAA - [0:0]\n:KUBE-SEP-ZZZZ - [0:0]\n:KUBE-SVC-BBBB - [0:0]\n');
    expect(rules.toString()).toBe('-X KUBE-EXT-AAAA\n-X KUBE-SEP-ZZZZ\n-X KUBE-SVC-BBBB\n');
  });
});
