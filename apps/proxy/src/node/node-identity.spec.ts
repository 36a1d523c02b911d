import { RecordingLogger } from '@kube-proxy/core/testing';
import type { V1Node } from '@kubernetes/client-node';
import { resolveNodeIPs } from './node-identity.js';

function nodeWith(...addresses: Array<[type: string, address: string]>): V1Node {
  return { metadata: { name: 'node-1' }, status: { addresses: addresses.map(([type, address]) => ({ type, address })) } };
}

describe('resolveNodeIPs', () => {
  it('keeps an IPv4-mapped InternalIP as the IPv4 address it is, in canonical text', () => {
    const { primary, ips } = resolveNodeIPs('0.0.0.0', nodeWith(['InternalIP', '::ffff:8.8.8.8'], ['InternalIP', 'fd00::2']), new RecordingLogger());
    expect(primary).toBe('IPv4');
    expect(ips).toEqual({ IPv4: '8.8.8.8', IPv6: 'fd00::2' });
  });

  it('writes IPv6 and leading-zero IPv4 node addresses canonically', () => {
    const { ips } = resolveNodeIPs('0.0.0.0', nodeWith(['InternalIP', 'FD00:0:0::0002'], ['InternalIP', '010.001.002.003']), new RecordingLogger());
    expect(ips).toEqual({ IPv6: 'fd00::2', IPv4: '10.1.2.3' });
  });

  it('skips text that is not an address and takes the next one, InternalIP before ExternalIP', () => {
    const { primary, ips } = resolveNodeIPs(
      '0.0.0.0',
      nodeWith(['ExternalIP', '203.0.113.9'], ['InternalIP', 'not-an-ip'], ['InternalIP', '192.168.49.2']),
      new RecordingLogger(),
    );
    expect(primary).toBe('IPv4');
    expect(ips).toEqual({ IPv4: '192.168.49.2' });
  });

  it('takes a specific --bind-address first, canonically', () => {
    const { primary, ips } = resolveNodeIPs('::ffff:10.0.0.7', nodeWith(['InternalIP', '192.168.49.2']), new RecordingLogger());
    expect(primary).toBe('IPv4');
    expect(ips).toEqual({ IPv4: '10.0.0.7' });
  });
});
