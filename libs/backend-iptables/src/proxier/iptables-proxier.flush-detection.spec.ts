import type { Table } from '@kube-proxy/netfilter-iptables';
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, advanceSettling } from '@kube-proxy/core/testing';
import { IPTABLES_FLUSH_SETTLE_MS } from '@kube-proxy/netfilter-iptables';
import { servicePortPolicyClusterChain } from '../render/index.js';
import { IptablesProxier } from './iptables-proxier.js';
import type { PortSpec } from './testing/proxier-fixtures.js';
import { context, service, settle, slice, TestIptables } from './testing/proxier-fixtures.js';

/*
 * Flush detection beyond chains (issue 10): rules flushed while every chain (canaries included)
 * survives must be noticed within one syncPeriod and repaired by a full resync.
 */

const HTTP: PortSpec[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }];
const WEB = service('ns1', 'web', '10.96.0.10', HTTP);
const WEB_EPS = slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11', '10.244.1.12']);
const WEB_CHAIN = servicePortPolicyClusterChain('ns1/web:http', 'TCP');
const SYNC_PERIOD_MS = 30_000;
const PORTALS_JUMP = '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES';
const WARNING = 'removed behind our back';

async function setup() {
  const clock = new FakeClock();
  const ipt = new TestIptables('IPv4');
  const logger = new RecordingLogger();
  const proxier = new IptablesProxier({
    family: 'IPv4',
    context: context(),
    iptables: ipt,
    executor: new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: '0 flow entries have been deleted.\n' }),
    sysctl: new FakeSysctl({ 'net/ipv4/conf/all/route_localnet': '0', 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' }),
    clock,
    logger,
    dryRunTables: ipt.tables,
    networkInterfaces: () => ({}),
  });
  const loop = proxier.syncLoop();
  proxier.onServiceAdd(WEB);
  proxier.onEndpointSliceAdd(WEB_EPS);
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  await settle();
  const advance = (ms: number, step = 100): Promise<void> => advanceSettling(clock, ms, step);
  const finish = async (): Promise<void> => {
    proxier.stop();
    await loop;
  };
  /** `iptables -t TABLE -F [CHAIN]`: rules gone, every chain (canary included) kept. */
  const flush = (table: Table, chain?: string): void => {
    for (const c of chain ? [chain] : ipt.tables.chains(table)) ipt.tables.flushChain(table, c);
  };
  const warnings = () => logger.entries.filter((e) => e.level === 'warn' && e.message.includes(WARNING));
  return { clock, ipt, logger, proxier, advance, finish, flush, warnings };
}

describe('IptablesProxier flush detection beyond chains', () => {
  it('resyncs fully within one syncPeriod after `iptables -t nat -F` (no -X: the canaries survive)', async () => {
    const s = await setup();
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 1 });
    s.flush('nat');
    expect(s.ipt.tables.chainExists('nat', 'KUBE-PROXY-CANARY')).toBe(true);
    expect(s.ipt.tables.rules('nat', 'PREROUTING')).toEqual([]);

    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    expect(s.ipt.tables.rules('nat', 'PREROUTING')).toEqual([PORTALS_JUMP]);
    expect(s.ipt.tables.rules('nat', 'OUTPUT')).toEqual([PORTALS_JUMP]);
    expect(s.ipt.tables.rules('nat', 'KUBE-SERVICES')?.some((r) => r.includes(`-j ${WEB_CHAIN}`))).toBe(true);
    expect(s.ipt.tables.rules('nat', WEB_CHAIN)?.length).toBeGreaterThan(0);
    // The warning names the table and what was missing.
    const [warning, ...more] = s.warnings();
    expect(more).toHaveLength(0);
    expect(warning?.meta).toMatchObject({ table: 'nat' });
    expect(warning?.meta['missingRules']).toEqual(
      expect.arrayContaining([
        `nat PREROUTING ${PORTALS_JUMP}`,
        'nat POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
        'nat KUBE-MARK-MASQ -j MARK --or-mark 0x00004000',
      ]),
    );
    await s.finish();
  });

  it('resyncs fully after `iptables -t filter -F`', async () => {
    const s = await setup();
    s.flush('filter');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    expect(s.warnings()[0]?.meta).toMatchObject({ table: 'filter' });
    expect(s.ipt.tables.rules('filter', 'FORWARD')).toContain('-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD');
    expect(s.ipt.tables.rules('filter', 'KUBE-FORWARD')?.length).toBeGreaterThan(0);
    await s.finish();
  });

  it('notices `iptables -t nat -F KUBE-SERVICES` (the jumps are kept, the chain is empty)', async () => {
    const s = await setup();
    s.flush('nat', 'KUBE-SERVICES');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    expect(s.warnings()[0]?.meta['missingRules']).toEqual([
      'nat KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    ]);
    expect(s.ipt.tables.rules('nat', 'KUBE-SERVICES')?.some((r) => r.includes(`-j ${WEB_CHAIN}`))).toBe(true);
    await s.finish();
  });

  it('notices `iptables -t nat -F KUBE-MARK-MASQ`', async () => {
    const s = await setup();
    s.flush('nat', 'KUBE-MARK-MASQ');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    expect(s.ipt.tables.rules('nat', 'KUBE-MARK-MASQ')).toEqual(['-j MARK --or-mark 0x00004000']);
    await s.finish();
  });

  it('`iptables -t mangle -F` removes nothing of ours (mangle holds only the empty canary): no resync; deleting the canary does resync', async () => {
    const s = await setup();
    s.flush('mangle');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 1, flushesDetected: 0 });
    s.ipt.tables.deleteChain('mangle', 'KUBE-PROXY-CANARY');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    await s.finish();
  });

  it('reports one flush per flush: nothing more once repaired, and no spurious resync while nothing is flushed', async () => {
    const s = await setup();
    // Ten periods of routine partial syncs: the expected rules stay, nothing is reported.
    for (let i = 0; i < 10; i++) {
      s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, i % 2 === 0 ? ['10.244.1.11'] : ['10.244.1.11', '10.244.1.12']));
      await s.advance(SYNC_PERIOD_MS, 1000);
    }
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 1, partialSyncs: 10, flushesDetected: 0 });
    expect(s.warnings()).toHaveLength(0);
    s.flush('nat');
    await s.advance(3 * SYNC_PERIOD_MS, 500);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    expect(s.warnings()).toHaveLength(1);
    await s.finish();
  });

  it('expects no rules before the first sync wrote them (no "flush" while waiting for Services)', async () => {
    const clock = new FakeClock();
    const ipt = new TestIptables('IPv4');
    const proxier = new IptablesProxier({
      family: 'IPv4',
      context: context(),
      iptables: ipt,
      executor: new FakeCommandExecutor().setDefault({ exitCode: 0 }),
      sysctl: new FakeSysctl({ 'net/ipv4/conf/all/route_localnet': '0', 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' }),
      clock,
      logger: new RecordingLogger(),
      dryRunTables: ipt.tables,
      networkInterfaces: () => ({}),
    });
    const loop = proxier.syncLoop();
    for (let t = 0; t < 3 * SYNC_PERIOD_MS; t += 1000) {
      clock.advance(1000);
      await settle();
    }
    expect(proxier.stats).toMatchObject({ syncs: 0, flushesDetected: 0 });
    proxier.stop();
    await loop;
  });
});
