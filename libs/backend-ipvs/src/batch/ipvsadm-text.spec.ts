import type { RealServer, VirtualServer } from '../state/ipvs-state.js';
import { addServerLine, addServiceLine, deleteServerLine, deleteServiceLine, editServerLine, editServiceLine } from './ipvsadm-text.js';

function vs(protocol: VirtualServer['protocol'], address: string, extra: Partial<VirtualServer> = {}): VirtualServer {
  return { protocol, address, port: 53, scheduler: 'rr', flags: [], persistenceTimeout: 0, realServers: [], key: 'unused', ...extra };
}
const rs = (address: string, weight = 1): RealServer => ({ address, port: 5353, weight, key: 'unused' });

describe('ipvsadm lines', () => {
  it('names the service by protocol option: -t, -u, --sctp-service', () => {
    expect(addServiceLine(vs('TCP', '10.0.0.1'))).toBe('-A -t 10.0.0.1:53 -s rr');
    expect(addServiceLine(vs('UDP', '10.0.0.1'))).toBe('-A -u 10.0.0.1:53 -s rr');
    expect(addServiceLine(vs('SCTP', '10.0.0.1'))).toBe('-A --sctp-service 10.0.0.1:53 -s rr');
  });

  it('writes the edit and delete forms with the same service and server notation, IPv6 in brackets', () => {
    const v = vs('UDP', 'fd00::1', { scheduler: 'sh', persistenceTimeout: 5 });
    expect(editServiceLine(v)).toBe('-E -u [fd00::1]:53 -s sh -p 5');
    expect(deleteServiceLine(v)).toBe('-D -u [fd00::1]:53');
    expect(addServerLine(v, rs('fd00::2'))).toBe('-a -u [fd00::1]:53 -r [fd00::2]:5353 -m -w 1');
    expect(editServerLine(v, rs('fd00::2', 0))).toBe('-e -u [fd00::1]:53 -r [fd00::2]:5353 -m -w 0');
    expect(deleteServerLine(v, rs('fd00::2'))).toBe('-d -u [fd00::1]:53 -r [fd00::2]:5353');
  });
});
