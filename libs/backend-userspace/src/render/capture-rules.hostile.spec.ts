/**
 * The userspace capture rules fed hostile names directly (issue 10), bypassing the source edge's
 * validation: the same rules as for a benign name, the name only as one comment-safe argument;
 * addresses and ports that are not core's canonical values are refused.
 */
import type { HostileName } from '@kube-proxy/core/testing';
import { assertRestoreLine, commentText, UnsafeRestoreTextError } from '@kube-proxy/core';
import { BENIGN_NAME, HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { renderCaptureRules, type CaptureOptions, type CapturePortal } from './capture-rules.js';

const OPTIONS: CaptureOptions = { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: '192.168.1.5' };

/** A service port with every kind of capture rule (cluster IP, external IP, LB IP, NodePort). */
function portal(h: HostileName): CapturePortal {
  return {
    name: `${h.namespace}/${h.name}${h.port === '' ? '' : `:${h.port}`}`,
    protocol: 'TCP',
    clusterIP: '10.96.0.10',
    port: 80,
    externalIPs: ['192.168.99.11'],
    loadBalancerIPs: ['1.2.3.4'],
    nodePort: 30080,
    internalProxyPort: 36001,
    externalProxyPort: 36002,
  };
}

const lines = (payload: string): string[] => payload.split('\n').slice(0, -1);
const benign = portal(BENIGN_NAME);
const benignPayload = renderCaptureRules([benign], OPTIONS).payload;

describe('renderCaptureRules with hostile names (bypassing validation)', () => {
  it.each(HOSTILE_NAMES.map((h) => [h.label, h] as const))('%s: exactly the benign rules, the name only as comment text', (_label, h) => {
    const p = portal(h);
    const r = renderCaptureRules([p], OPTIONS);
    // Same rules, line for line, once the comment text is put back.
    expect(lines(r.payload)).toHaveLength(lines(benignPayload).length);
    expect(r.payload.split(commentText(p.name)).join(commentText(benign.name))).toBe(benignPayload);
    expect(r.payload).not.toMatch(/^-A INPUT/m);
    expect(lines(r.payload).filter((l) => l.includes('-j ACCEPT'))).toHaveLength(1);
    for (const [i, line] of lines(r.payload).entries()) {
      assertRestoreLine(line, i + 1);
      if (!line.startsWith('-A ')) continue;
      const tokens = tokenize(line);
      const at = tokens.indexOf('--comment');
      expect(tokens[at + 1]).toBe(commentText(p.name));
      expect(tokens[at + 2]).toBe('-p');
    }
  });

  it.each([
    ['a cluster IP with arguments', { clusterIP: '10.96.0.10 -j ACCEPT' }],
    ['an external IP with a newline', { externalIPs: ['192.168.99.11\n-A INPUT -j ACCEPT'] }],
    ['a load balancer IP that is not canonical', { loadBalancerIPs: ['001.002.003.004'] }],
    ['a protocol outside TCP/UDP/SCTP', { protocol: 'tcp -j ACCEPT' }],
    ['a port that is text', { port: '80 -j ACCEPT' }],
    ['a node port out of range', { nodePort: 70000 }],
  ] as Array<[string, Record<string, unknown>]>)('refuses %s and produces no payload', (_label, overrides) => {
    expect(() => renderCaptureRules([{ ...benign, ...overrides } as CapturePortal], OPTIONS)).toThrow(UnsafeRestoreTextError);
  });

  it('refuses a listen or node IP that is not canonical', () => {
    expect(() => renderCaptureRules([benign], { ...OPTIONS, listenIP: '0.0.0.0 -j ACCEPT' })).toThrow(UnsafeRestoreTextError);
    expect(() => renderCaptureRules([benign], { ...OPTIONS, nodeIP: '192.168.1.5\n' })).toThrow(UnsafeRestoreTextError);
  });
});
