import { localDetectorArgs } from './local-detector-args.js';

// Upstream pkg/proxy/util/localdetector.go: NewDetectLocalByCIDR / ByBridgeInterface /
// ByInterfaceNamePrefix / NewNoOpLocalDetector.
describe('localDetectorArgs', () => {
  it('cidr', () => {
    const d = localDetectorArgs({ kind: 'cidr', cidr: '10.0.0.0/14' });
    expect(d.implemented).toBe(true);
    expect(d.ifLocal).toEqual(['-s', '10.0.0.0/14']);
    expect(d.ifNotLocal).toEqual(['!', '-s', '10.0.0.0/14']);
    expect(d.ifLocalText).toBe('-s 10.0.0.0/14');
    expect(d.ifNotLocalText).toBe('! -s 10.0.0.0/14');
  });

  it('cidr (IPv6)', () => {
    const d = localDetectorArgs({ kind: 'cidr', cidr: '2002:0:0:1234::/64' });
    expect(d.ifLocal).toEqual(['-s', '2002:0:0:1234::/64']);
    expect(d.ifNotLocal).toEqual(['!', '-s', '2002:0:0:1234::/64']);
  });

  it('bridge-interface', () => {
    const d = localDetectorArgs({ kind: 'bridge-interface', interfaceName: 'eth0' });
    expect(d.implemented).toBe(true);
    expect(d.ifLocal).toEqual(['-i', 'eth0']);
    expect(d.ifNotLocal).toEqual(['!', '-i', 'eth0']);
  });

  it('interface-name-prefix', () => {
    const d = localDetectorArgs({ kind: 'interface-name-prefix', prefix: 'veth' });
    expect(d.implemented).toBe(true);
    expect(d.ifLocal).toEqual(['-i', 'veth+']);
    expect(d.ifNotLocal).toEqual(['!', '-i', 'veth+']);
    expect(d.ifLocalText).toBe('-i veth+');
    expect(d.ifNotLocalText).toBe('! -i veth+');
  });

  it('none is not implemented', () => {
    const d = localDetectorArgs({ kind: 'none' });
    expect(d.implemented).toBe(false);
    expect(d.ifLocal).toEqual([]);
    expect(d.ifNotLocal).toEqual([]);
  });
});
