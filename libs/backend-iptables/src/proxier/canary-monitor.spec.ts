import { FakeClock } from '@kube-proxy/core/testing';
import { nullLogger } from '@kube-proxy/core';
import { DryRunIptables } from '@kube-proxy/netfilter-iptables';
import { canaryFlushMonitor, IPTABLES_FLUSH_SETTLE_MS, IPTABLES_FLUSH_TIMEOUT_MS } from './canary-monitor.js';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** Advances the fake clock in 100 ms steps, letting async work run in between. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    clock.advance(Math.min(100, ms - t));
    await flush();
  }
}

function setup() {
  const clock = new FakeClock();
  const ipt = new DryRunIptables('IPv4');
  let flushes = 0;
  const monitor = canaryFlushMonitor({
    iptables: ipt,
    clock,
    logger: nullLogger,
    intervalMs: 30_000,
    onFlush: () => flushes++,
  });
  return { clock, ipt, monitor, flushes: () => flushes };
}

describe('canaryFlushMonitor', () => {
  it('creates KUBE-PROXY-CANARY in mangle, nat and filter on start', async () => {
    const { ipt, monitor } = setup();
    await monitor.start();
    for (const table of ['mangle', 'nat', 'filter']) {
      expect(ipt.tables.chainExists(table, 'KUBE-PROXY-CANARY')).toBe(true);
    }
    monitor.stop();
  });

  it('does nothing while the canaries are there', async () => {
    const { clock, monitor, flushes } = setup();
    await monitor.start();
    await advance(clock, 95_000);
    expect(flushes()).toBe(0);
    monitor.stop();
  });

  it('detects a flush of every table at the next interval, recreates the canaries and calls onFlush', async () => {
    const { clock, ipt, monitor, flushes } = setup();
    await monitor.start();
    for (const table of ['mangle', 'nat', 'filter']) ipt.tables.dropTable(table); // iptables -F / -X everywhere
    await advance(clock, 29_900);
    expect(flushes()).toBe(0);
    await advance(clock, 100);
    expect(flushes()).toBe(1);
    for (const table of ['mangle', 'nat', 'filter']) {
      expect(ipt.tables.chainExists(table, 'KUBE-PROXY-CANARY')).toBe(true);
    }
    // And keeps monitoring.
    ipt.tables.deleteChain('mangle', 'KUBE-PROXY-CANARY');
    ipt.tables.deleteChain('nat', 'KUBE-PROXY-CANARY');
    ipt.tables.deleteChain('filter', 'KUBE-PROXY-CANARY');
    await advance(clock, 30_000);
    expect(flushes()).toBe(2);
    monitor.stop();
  });

  it('notices a flush of nat alone even though the mangle canary survived (kubernetes#133767)', async () => {
    const { ipt, monitor, flushes, clock } = setup();
    await monitor.ensureCanaries();
    ipt.tables.dropTable('nat');
    const checked = monitor.check();
    // It gives a flush in progress time to spread, but once nothing changes for the settle time the
    // flush is over: rules come back well within a syncPeriod instead of upstream's fixed 5 s.
    await advance(clock, IPTABLES_FLUSH_SETTLE_MS - 200);
    expect(flushes()).toBe(0);
    await advance(clock, 400);
    await expect(checked).resolves.toBe(true);
    expect(flushes()).toBe(1);
    expect(ipt.tables.chainExists('nat', 'KUBE-PROXY-CANARY')).toBe(true);
  });

  it('keeps waiting while a slow flush spreads from table to table, up to the 5 s cap', async () => {
    const { ipt, monitor, flushes, clock } = setup();
    await monitor.ensureCanaries();
    ipt.tables.deleteChain('mangle', 'KUBE-PROXY-CANARY');
    const checked = monitor.check();
    await advance(clock, IPTABLES_FLUSH_SETTLE_MS - 100);
    ipt.tables.deleteChain('nat', 'KUBE-PROXY-CANARY'); // still spreading: the settle clock restarts
    await advance(clock, IPTABLES_FLUSH_SETTLE_MS - 100);
    expect(flushes()).toBe(0);
    await advance(clock, IPTABLES_FLUSH_TIMEOUT_MS);
    await expect(checked).resolves.toBe(true);
    expect(flushes()).toBe(1);
  });

  it('waits for a flush in progress to reach every table before resyncing', async () => {
    const { ipt, monitor, flushes, clock } = setup();
    await monitor.ensureCanaries();
    ipt.tables.deleteChain('mangle', 'KUBE-PROXY-CANARY');
    const checked = monitor.check();
    await advance(clock, 300);
    expect(flushes()).toBe(0);
    ipt.tables.deleteChain('nat', 'KUBE-PROXY-CANARY');
    ipt.tables.deleteChain('filter', 'KUBE-PROXY-CANARY');
    await advance(clock, 100);
    await expect(checked).resolves.toBe(true);
    expect(flushes()).toBe(1);
  });

  it('treats a failing check as "unknown", not as a flush', async () => {
    const { ipt, monitor, flushes } = setup();
    await monitor.ensureCanaries();
    ipt.chainExists = async () => {
      throw new Error('Another app is currently holding the xtables lock');
    };
    await expect(monitor.check()).resolves.toBe(false);
    expect(flushes()).toBe(0);
  });
});
