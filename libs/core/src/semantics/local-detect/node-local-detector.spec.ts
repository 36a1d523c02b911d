import { RecordingLogger } from '../../testing/host-fakes.js';
import { NO_LOCAL_DETECTOR } from './local-traffic-detector.js';
import { localDetectorAfterNodeEvent } from './node-local-detector.js';

describe('localDetectorAfterNodeEvent', () => {
  const config = { detectLocalMode: 'NodeCIDR' as const, clusterCIDR: '', detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' } };
  const node = (name: string, podCIDRs: string[]) => ({ metadata: { name }, spec: { podCIDRs } });
  const logger = new RecordingLogger();

  it("follows this Node's podCIDRs of the family, and nothing else", () => {
    const first = localDetectorAfterNodeEvent(config, 'IPv4', 'node-1', NO_LOCAL_DETECTOR, { node: node('node-1', ['fd00:1::/64', '10.244.3.0/24']), deleted: false }, logger);
    expect(first).toEqual({ kind: 'cidr', cidr: '10.244.3.0/24' });
    expect(localDetectorAfterNodeEvent(config, 'IPv4', 'node-1', first!, { node: node('node-1', ['10.244.3.0/24']), deleted: false }, logger)).toBeUndefined();
    expect(localDetectorAfterNodeEvent(config, 'IPv4', 'node-1', first!, { node: node('node-2', ['10.244.9.0/24']), deleted: false }, logger)).toBeUndefined();
    expect(localDetectorAfterNodeEvent(config, 'IPv4', 'node-1', first!, { node: node('node-1', ['10.244.3.0/24']), deleted: true }, logger)).toEqual(NO_LOCAL_DETECTOR);
    expect(localDetectorAfterNodeEvent({ ...config, detectLocalMode: 'ClusterCIDR' }, 'IPv4', 'node-1', first!, { node: node('node-1', ['10.244.4.0/24']), deleted: false }, logger)).toBeUndefined();
  });
});
