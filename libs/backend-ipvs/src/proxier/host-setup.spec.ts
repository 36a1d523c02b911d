import { FakeCommandExecutor, FakeSysctl, RecordingLogger } from '@kube-proxy/core/testing';
import { HostSetup, ipvsSysctls, ipvsTimeoutArgs } from './host-setup.js';

const zero = { tcpTimeout: '0s', tcpFinTimeout: '0s', udpTimeout: '0s' };

describe('IPVS host setup', () => {
  const logger = new RecordingLogger();

  it('writes upstream NewProxier sysctls; conn_reuse_mode=0 only on kernels 4.1 to 5.8', () => {
    const names = (release: string, strict = false) => ipvsSysctls(release, strict, logger).map(([n, v]) => `${n}=${v}`);
    expect(names('6.1.0-57-amd64')).toEqual([
      'net/ipv4/conf/all/route_localnet=1',
      'net/ipv4/vs/conntrack=1',
      'net/ipv4/vs/expire_nodest_conn=1',
      'net/ipv4/vs/expire_quiescent_template=1',
      'net/ipv4/ip_forward=1',
    ]);
    expect(names('5.4.0-42-generic')).toContain('net/ipv4/vs/conn_reuse_mode=0');
    expect(names('4.0.9')).not.toContain('net/ipv4/vs/conn_reuse_mode=0');
    expect(names('6.1.0', true).slice(-2)).toEqual(['net/ipv4/conf/all/arp_ignore=1', 'net/ipv4/conf/all/arp_announce=2']);
  });

  it('sets the IPVS timeouts with one ipvsadm --set only when one is non-zero (0 keeps the kernel value)', () => {
    expect(ipvsTimeoutArgs(zero)).toBeNull();
    expect(ipvsTimeoutArgs({ tcpTimeout: '15m', tcpFinTimeout: '30s', udpTimeout: '0s' })).toEqual(['--set', '900', '30', '0']);
  });

  it('runs once, skips sysctls already right, and goes on past a read-only one', async () => {
    const sysctl = new FakeSysctl({
      'net/ipv4/vs/conntrack': '1',
      'net/ipv4/vs/expire_nodest_conn': '0',
      'net/ipv4/vs/expire_quiescent_template': '0',
      'net/ipv4/ip_forward': '0',
      'net/ipv4/conf/all/route_localnet': '0',
    }).makeReadOnly('net/ipv4/conf/all/route_localnet');
    const exec = new FakeCommandExecutor();
    const setup = new HostSetup({ sysctl, executor: exec, logger, ipvs: { ...zero, strictARP: false, udpTimeout: '5s' }, kernelRelease: '6.1.0' });
    let loads = 0;
    const load = async (): Promise<void> => void loads++;
    const setup2 = new HostSetup({ sysctl: new FakeSysctl(), executor: new FakeCommandExecutor(), logger, ipvs: { ...zero, strictARP: false }, kernelRelease: '6.1.0', loadIpvs: load });
    await setup2.ensure();
    expect(loads).toBe(1);
    await Promise.all([setup.ensure(), setup.ensure()]);
    expect(sysctl.writes.map((w) => w.name)).toEqual(['net/ipv4/vs/expire_nodest_conn', 'net/ipv4/vs/expire_quiescent_template', 'net/ipv4/ip_forward']);
    expect(exec.calls.map((c) => [c.command, ...c.args])).toEqual([['ipvsadm', '--set', '0', '0', '5']]);
  });
});
