import { defaultConfiguration, type KubeProxyConntrackConfiguration } from '@kube-proxy/core';
import { FakeSysctl, RecordingLogger } from '@kube-proxy/core/testing';
import {
  checkBridgeNetfilter,
  conntrackMax,
  setupConntrack,
  SYSCTL_BRIDGE_NF_CALL_IPTABLES,
  SYSCTL_CONNTRACK_MAX,
  SYSCTL_TCP_BE_LIBERAL,
  SYSCTL_TCP_TIMEOUT_CLOSE_WAIT,
  SYSCTL_TCP_TIMEOUT_ESTABLISHED,
  SYSCTL_UDP_TIMEOUT,
  SYSCTL_UDP_TIMEOUT_STREAM,
} from './conntrack-setup.js';
import { REASON_FAILED_TO_SET_CONNTRACK, REASON_READ_ONLY_SYSFS, type NodeEventRecorder } from './node-events.js';

/** A NodeEventRecorder that keeps what it was given. */
function recorder(): NodeEventRecorder & { warnings: { reason: string; note: string }[] } {
  const warnings: { reason: string; note: string }[] = [];
  return { warnings, warning: (reason, note) => void warnings.push({ reason, note }) };
}

const DEFAULTS = defaultConfiguration().conntrack;
const cfg = (over: Partial<KubeProxyConntrackConfiguration> = {}): KubeProxyConntrackConfiguration => ({ ...DEFAULTS, ...over });

/** A kernel with every conntrack sysctl present at its usual defaults. */
function kernel(): FakeSysctl {
  return new FakeSysctl({
    [SYSCTL_CONNTRACK_MAX]: '65536',
    [SYSCTL_TCP_TIMEOUT_ESTABLISHED]: '432000',
    [SYSCTL_TCP_TIMEOUT_CLOSE_WAIT]: '60',
    [SYSCTL_TCP_BE_LIBERAL]: '0',
    [SYSCTL_UDP_TIMEOUT]: '30',
    [SYSCTL_UDP_TIMEOUT_STREAM]: '120',
  });
}

describe('conntrackMax', () => {
  it('is maxPerCore × CPUs, at least min; 0 leaves the kernel value', () => {
    expect(conntrackMax(cfg({ maxPerCore: 32768, min: 131072 }), 8)).toBe(262144);
    expect(conntrackMax(cfg({ maxPerCore: 32768, min: 131072 }), 2)).toBe(131072);
    expect(conntrackMax(cfg({ maxPerCore: 0, min: 131072 }), 64)).toBe(0);
  });
});

describe('setupConntrack', () => {
  it('applies the defaults: max, established and close-wait timeouts, only where they differ', async () => {
    const sysctl = kernel();
    sysctl.values.set(SYSCTL_TCP_TIMEOUT_CLOSE_WAIT, '3600'); // already right
    await setupConntrack({ config: cfg(), sysctl, logger: new RecordingLogger(), numCPU: 4 });
    expect(sysctl.writes).toEqual([
      { name: SYSCTL_CONNTRACK_MAX, value: '131072' },
      { name: SYSCTL_TCP_TIMEOUT_ESTABLISHED, value: '86400' },
    ]);
  });

  it('sets be_liberal and the UDP timeouts when configured (whole seconds)', async () => {
    const sysctl = kernel();
    await setupConntrack({
      config: cfg({ maxPerCore: 0, tcpBeLiberal: true, udpTimeout: '45s', udpStreamTimeout: '2m30.9s' }),
      sysctl,
      logger: new RecordingLogger(),
      numCPU: 4,
    });
    expect(sysctl.writes).toEqual([
      { name: SYSCTL_TCP_TIMEOUT_ESTABLISHED, value: '86400' },
      { name: SYSCTL_TCP_TIMEOUT_CLOSE_WAIT, value: '3600' },
      { name: SYSCTL_TCP_BE_LIBERAL, value: '1' },
      { name: SYSCTL_UDP_TIMEOUT, value: '45' },
      { name: SYSCTL_UDP_TIMEOUT_STREAM, value: '150' },
    ]);
  });

  it('leaves everything alone when every setting is zero', async () => {
    const sysctl = kernel();
    await setupConntrack({
      config: cfg({ maxPerCore: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' }),
      sysctl,
      logger: new RecordingLogger(),
      numCPU: 4,
    });
    expect(sysctl.writes).toEqual([]);
  });

  it('warns instead of failing on a read-only /proc/sys (non-initial netns) and carries on', async () => {
    const sysctl = kernel().makeReadOnly(SYSCTL_CONNTRACK_MAX);
    const logger = new RecordingLogger();
    await expect(setupConntrack({ config: cfg(), sysctl, logger, numCPU: 4 })).resolves.toBeUndefined();
    expect(logger.has('warn', 'read-only /proc/sys or no permission')).toBe(true);
    expect(sysctl.writes.map((w) => w.name)).toEqual([SYSCTL_TCP_TIMEOUT_ESTABLISHED, SYSCTL_TCP_TIMEOUT_CLOSE_WAIT]);
  });

  it('posts one Warning event naming the sysctl a read-only /proc/sys refused', async () => {
    const sysctl = kernel().makeReadOnly(SYSCTL_CONNTRACK_MAX);
    const events = recorder();
    await setupConntrack({ config: cfg(), sysctl, logger: new RecordingLogger(), numCPU: 4, events });
    expect(events.warnings).toHaveLength(1);
    expect(events.warnings[0]?.reason).toBe(REASON_READ_ONLY_SYSFS);
    expect(events.warnings[0]?.note).toContain(SYSCTL_CONNTRACK_MAX);
    expect(events.warnings[0]?.note).toContain('131072');
  });

  it('posts no event when every write succeeds', async () => {
    const events = recorder();
    await setupConntrack({ config: cfg(), sysctl: kernel(), logger: new RecordingLogger(), numCPU: 4, events });
    expect(events.warnings).toEqual([]);
  });

  it('warns when a sysctl does not exist (nf_conntrack not loaded)', async () => {
    const sysctl = new FakeSysctl();
    const logger = new RecordingLogger();
    await setupConntrack({ config: cfg(), sysctl, logger, numCPU: 1 });
    expect(logger.messages('warn')).toHaveLength(3);
    expect(logger.has('warn', 'Cannot set conntrack sysctl; keeping the kernel value')).toBe(true);
  });

  it('posts a FailedToSetConntrack event per sysctl that could not be set for another reason', async () => {
    const events = recorder();
    await setupConntrack({ config: cfg(), sysctl: new FakeSysctl(), logger: new RecordingLogger(), numCPU: 1, events });
    expect(events.warnings.map((w) => w.reason)).toEqual([REASON_FAILED_TO_SET_CONNTRACK, REASON_FAILED_TO_SET_CONNTRACK, REASON_FAILED_TO_SET_CONNTRACK]);
    expect(events.warnings.map((w) => w.note.split(' ')[3])).toEqual([SYSCTL_CONNTRACK_MAX, SYSCTL_TCP_TIMEOUT_ESTABLISHED, SYSCTL_TCP_TIMEOUT_CLOSE_WAIT]);
  });
});

describe('checkBridgeNetfilter', () => {
  it('warns when bridge-nf-call-iptables is off, says nothing when on or absent', async () => {
    const off = new RecordingLogger();
    await checkBridgeNetfilter(new FakeSysctl({ [SYSCTL_BRIDGE_NF_CALL_IPTABLES]: '0' }), off);
    expect(off.has('warn', 'br-nf-call-iptables')).toBe(true);

    const on = new RecordingLogger();
    await checkBridgeNetfilter(new FakeSysctl({ [SYSCTL_BRIDGE_NF_CALL_IPTABLES]: '1' }), on);
    const absent = new RecordingLogger();
    await checkBridgeNetfilter(new FakeSysctl(), absent);
    expect([...on.entries, ...absent.entries]).toEqual([]);
  });
});
