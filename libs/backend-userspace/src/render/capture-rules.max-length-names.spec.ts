/**
 * Issue 20: the capture rules with the longest valid names (namespace and Service name 63
 * characters, port name 15: `ns/name:port` is 143). iptables 1.8.9 (legacy and nft, measured in a
 * network namespace) cuts a comment to 255 bytes (xt_comment) and refuses a chain name over 28
 * characters. Capture rules do not depend on endpoints (a service without any is refused by the
 * proxy socket, not by a rule), so one portal set covers both cases.
 */
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { renderCaptureRules, type CapturePortal } from './capture-rules.js';

const label63 = (tag: string): string => tag + 'x'.repeat(63 - tag.length);
const NAME = `${label63('ns-')}/${label63('svc-')}:port-name-15chr`;

const FAMILIES = [
  { family: 'IPv4' as const, listenIP: '0.0.0.0', nodeIP: '192.168.1.5', clusterIP: '10.96.0.10', ext: '192.168.99.11', lb: '1.2.3.4' },
  { family: 'IPv6' as const, listenIP: '::', nodeIP: '2001:db8::5', clusterIP: 'fd00:10:96::10', ext: '2001:db8:99::11', lb: '2001:db8:200::4' },
];

describe.each(FAMILIES)('userspace capture rules with maximum-length names ($family)', (f) => {
  const portal: CapturePortal = {
    name: NAME,
    protocol: 'TCP',
    clusterIP: f.clusterIP,
    port: 80,
    externalIPs: [f.ext],
    loadBalancerIPs: [f.lb],
    nodePort: 30080,
    internalProxyPort: 36001,
    externalProxyPort: 36002,
  };
  const { payload } = renderCaptureRules([portal], { family: f.family, listenIP: f.listenIP, nodeIP: f.nodeIP });
  const lines = payload.split('\n').filter((l) => l !== '');

  it('writes the whole name in every comment, within 255 bytes', () => {
    expect(NAME).toHaveLength(143);
    let comments = 0;
    for (const line of lines) {
      const tokens = tokenize(line);
      tokens.forEach((t, i) => {
        if (t !== '--comment') return;
        comments++;
        expect(tokens[i + 1]).toBe(NAME);
        expect(Buffer.byteLength(tokens[i + 1] as string)).toBeLessThanOrEqual(255);
      });
    }
    // Cluster IP ×2, external IP ×3, LB IP ×2, node port ×3.
    expect(comments).toBe(10);
  });

  it('every chain name within 28 characters', () => {
    for (const line of lines) {
      const tokens = tokenize(line);
      if (line.startsWith(':')) expect((line.slice(1).split(' ')[0] as string).length).toBeLessThanOrEqual(28);
      if (tokens[0] === '-A') expect((tokens[1] as string).length).toBeLessThanOrEqual(28);
    }
  });
});
