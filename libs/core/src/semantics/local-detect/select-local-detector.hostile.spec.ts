import { RecordingLogger } from '../../testing/host-fakes.js';
import { selectLocalDetector } from './select-local-detector.js';

// NodeCIDR mode reads spec.podCIDRs from the Node object (the API): only core's canonical CIDR text
// may reach the `-s CIDR` / `! -s CIDR` rules (issue 10).
describe('selectLocalDetector with hostile podCIDRs', () => {
  const mode = { detectLocalMode: 'NodeCIDR' as const, clusterCIDR: '', detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' } };
  const logger = new RecordingLogger();

  it('writes the canonical text core parsed, not the text as given', () => {
    expect(selectLocalDetector(mode, 'IPv4', [' 010.244.003.000/24 '], logger)).toEqual({ kind: 'cidr', cidr: '10.244.3.0/24' });
    expect(selectLocalDetector(mode, 'IPv4', ['10.244.3.7/24'], logger)).toEqual({ kind: 'cidr', cidr: '10.244.3.0/24' });
    expect(selectLocalDetector(mode, 'IPv6', ['FD00:244:0:3:0::/64'], logger)).toEqual({ kind: 'cidr', cidr: 'fd00:244:0:3::/64' });
  });

  it.each(['10.244.3.0/24 -j ACCEPT', '10.244.3.0/24\n-A INPUT -j ACCEPT', '"10.244.3.0/24"', '10.244.3.0/24\0'])('ignores %j: no detector from it', (cidr) => {
    expect(selectLocalDetector(mode, 'IPv4', [cidr], logger)).toEqual({ kind: 'none' });
    expect(selectLocalDetector(mode, 'IPv4', [cidr, '10.244.4.0/24'], logger)).toEqual({ kind: 'cidr', cidr: '10.244.4.0/24' });
  });
});
