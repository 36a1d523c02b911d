import type { PacketTrace, TracePacket } from '@kube-proxy/core';
import { formatTraceText, traceJson } from './trace-output.js';

const packet: TracePacket = { family: 'IPv6', protocol: 'UDP', sourceIP: 'fd00::1', sourcePort: 5353, destIP: 'fd00:96::a', destPort: 53, locallyGenerated: true };
const origin = { mode: 'nftables', family: 'IPv6' as const, source: 'nft list table ip6 kube-proxy' };

function trace(overrides: Partial<PacketTrace>): PacketTrace {
  return {
    verdict: 'DROP',
    endpoints: [],
    choices: [],
    masquerade: false,
    masqueradeReason: 'no rule marks the packet for masquerade; the source address is kept',
    service: 'kube-system/dns:dns',
    path: [{ where: 'ip6 kube-proxy/filter-output', rule: 'ct state new jump firewall-check' }],
    reason: 'externalTrafficPolicy Local and no local endpoint of kube-system/dns:dns on node-1',
    ...overrides,
  };
}

describe('trace output', () => {
  it('text: a packet the node sends, IPv6 spelled with brackets, a DROP and its reason', () => {
    expect(formatTraceText(trace({}), packet, origin)).toBe(
      [
        'Packet:     UDP [fd00::1]:5353 -> [fd00:96::a]:53, sent by the node itself (OUTPUT)',
        'Rules:      nftables mode, IPv6, from nft list table ip6 kube-proxy',
        'Service:    kube-system/dns:dns',
        '',
        'Path:',
        '  1.  ip6 kube-proxy/filter-output',
        '      ct state new jump firewall-check',
        '',
        'Verdict:    DROP (the client sees a timeout)',
        'Masquerade: no: no rule marks the packet for masquerade; the source address is kept',
        'Reason:     externalTrafficPolicy Local and no local endpoint of kube-system/dns:dns on node-1',
        '',
      ].join('\n'),
    );
  });

  it('text: DNAT lists every endpoint with its probability; ACCEPT says nothing applied', () => {
    const dnat = trace({
      verdict: 'DNAT',
      endpoints: ['[fd00::a1]:53', '[fd00::a2]:53'],
      choices: [
        { endpoint: '[fd00::a2]:53', probability: 0.5 },
        { endpoint: '[fd00::a1]:53', probability: 0.5 },
      ],
      masquerade: true,
      masqueradeReason: 'masqueradeAll is set',
    });
    const text = formatTraceText(dnat, { ...packet, locallyGenerated: false, inInterface: 'cni0' }, origin);
    expect(text).toContain('arriving from outside the node or from a pod (PREROUTING, in on cni0)');
    expect(text).toContain('Verdict:    DNAT to one of 2 endpoints\n  [fd00::a2]:53  50%\n  [fd00::a1]:53  50%\n');
    expect(text).toContain('Masquerade: yes: masqueradeAll is set');
    const accept = formatTraceText(trace({ verdict: 'ACCEPT', service: null, path: [] }), packet, origin);
    expect(accept).toContain('Service:    (none)\n\nPath:\n  (no rule took effect)\n');
    expect(accept).toContain('Verdict:    ACCEPT (no Service rule applies; the packet passes unchanged)');
  });

  it('JSON: the PacketTrace as it is, every contract field kept, plus mode, family and source', () => {
    const t = trace({});
    expect(traceJson(t, origin)).toEqual({ ...t, mode: 'nftables', family: 'IPv6', source: 'nft list table ip6 kube-proxy' });
  });
});
