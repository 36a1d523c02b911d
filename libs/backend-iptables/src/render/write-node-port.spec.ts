import type { NodePortAddressPlan } from '@kube-proxy/core';
import { LineBuffer } from './line-buffer.js';
import { plan, writerFixture } from './testing/writer-fixtures.js';
import { writeHealthCheckNodePort, writeNodePort, writeNodePortsJump } from './write-node-port.js';

const COMMENT = '-m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain"';

function jump(p: NodePortAddressPlan, isIPv6 = false): string {
  const b = new LineBuffer();
  writeNodePortsJump(b, p, isIPv6);
  return b.toString();
}

describe('node-port writer', () => {
  it('jumps to KUBE-NODEPORTS for every local address, excluding the family’s loopback when the plan says so', () => {
    const all = { allLocalAddresses: true, addresses: [], localhostNodePorts: false } as const;
    expect(jump({ ...all, excludeLoopback: false, localhostNodePorts: true })).toBe(`-A KUBE-SERVICES ${COMMENT} -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n`);
    expect(jump({ ...all, excludeLoopback: true })).toBe(`-A KUBE-SERVICES ${COMMENT} -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS\n`);
    expect(jump({ ...all, excludeLoopback: true }, true)).toBe(`-A KUBE-SERVICES ${COMMENT} -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS\n`);
  });

  it('jumps once per selected address, in the plan’s order', () => {
    expect(jump({ allLocalAddresses: false, excludeLoopback: false, addresses: ['192.168.0.2', '127.0.0.1'], localhostNodePorts: true })).toBe(
      `-A KUBE-SERVICES ${COMMENT} -d 192.168.0.2 -j KUBE-NODEPORTS\n-A KUBE-SERVICES ${COMMENT} -d 127.0.0.1 -j KUBE-NODEPORTS\n`,
    );
  });

  it('captures the node port to EXT (with the nfacct-counted localhost rule first when asked) and writes the drop verdict', () => {
    const f = writerFixture({ localhostNodePortsNfacct: true });
    writeNodePort(f.w, plan({ nodePort: 30080, externalReachable: false, externalVerdict: 'drop' }), f.chains, '-m tcp -p tcp');
    const { ext } = f.chains;
    expect(f.text()).toEqual({
      nNodePorts:
        `-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp -d 127.0.0.0/8 --dport 30080 -m nfacct --nfacct-name localhost_nps_accepted_pkts -j ${ext}\n` +
        `-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 30080 -j ${ext}\n`,
      fExternal: '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no local endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30080 -j DROP\n',
    });
  });

  it('writes nothing for a port without node port or health-check port', () => {
    const f = writerFixture();
    writeNodePort(f.w, plan(), f.chains, '-m tcp -p tcp');
    writeHealthCheckNodePort(f.w, plan(), f.chains);
    expect(f.text()).toEqual({});
  });

  it('opens the health-check node port in filter KUBE-NODEPORTS', () => {
    const f = writerFixture();
    writeHealthCheckNodePort(f.w, plan({ healthCheckNodePort: 30000 }), f.chains);
    expect(f.text()).toEqual({ fNodePorts: '-A KUBE-NODEPORTS -m comment --comment "ns1/svc1:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT\n' });
  });
});
