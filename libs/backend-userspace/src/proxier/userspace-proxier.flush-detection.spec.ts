import type { Table } from '@kube-proxy/netfilter-iptables';
import { FakeClock, RecordingLogger, advanceSettling, settle } from '@kube-proxy/core/testing';
import { IPTABLES_FLUSH_SETTLE_MS } from '@kube-proxy/netfilter-iptables';
import { newProxyCounters, dryRunSocketOpener } from '@kube-proxy/userspace-proxy';
import { context, RecordingIptables, service, slice } from '../testing/proxier-fixtures.js';
import { UserspaceProxier } from './userspace-proxier.js';

/*
 * Flush detection for the userspace mode's capture rules (issue 10): rules flushed while the chains
 * survive are noticed within one syncPeriod (1 s in these fixtures) and re-installed by a resync.
 */

const SYNC_PERIOD_MS = 1000;
const PORTALS_JUMP = '-I nat PREROUTING -m comment --comment handle ClusterIPs; NOTE: this must be before the NodePort rules -j KUBE-PORTALS-CONTAINER';
const NON_LOCAL_JUMP = '-I filter INPUT -m comment --comment Ensure that non-local NodePort traffic can flow -j KUBE-NODEPORT-NON-LOCAL';


async function setup() {
  const clock = new FakeClock();
  const iptables = new RecordingIptables();
  const logger = new RecordingLogger();
  const proxier = new UserspaceProxier({
    family: 'IPv4',
    context: context(),
    iptables,
    openSocket: dryRunSocketOpener(),
    counters: newProxyCounters(),
    clock,
    logger,
  });
  const loop = proxier.syncLoop();
  proxier.onServiceAdd(service('web', '10.96.0.10', [{ name: 'http', port: 80, nodePort: 30080 }], { type: 'NodePort' }));
  proxier.onEndpointSliceAdd(slice('web', '1', 'http', 8080, [{ ip: '10.244.1.11' }]));
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  await settle();
  await proxier.firstSync();
  const advance = (ms: number, step = 100): Promise<void> => advanceSettling(clock, ms, step);
  const finish = async (): Promise<void> => {
    proxier.stop();
    await loop;
  };
  const warnings = () => logger.entries.filter((e) => e.level === 'warn' && e.message.includes('removed behind our back'));
  return { iptables, proxier, advance, finish, warnings, flush: (table: Table, chain?: string) => iptables.flush(table, chain) };
}

describe('UserspaceProxier flush detection', () => {
  it('re-installs the capture rules within one syncPeriod after `iptables -t nat -F` (chains kept)', async () => {
    const s = await setup();
    expect(s.proxier.stats.syncs).toBe(1);
    s.flush('nat');
    expect(s.iptables.rules).not.toContain(PORTALS_JUMP);
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 300);
    expect(s.proxier.stats).toMatchObject({ syncs: 2, flushesDetected: 1 });
    expect(s.iptables.rules).toContain(PORTALS_JUMP);
    expect(s.iptables.payloads).toHaveLength(2);
    expect(s.iptables.lastPayload).toContain('-A KUBE-PORTALS-CONTAINER -m comment --comment default/web:http');
    const [warning, ...more] = s.warnings();
    expect(more).toHaveLength(0);
    expect(warning?.meta).toMatchObject({ table: 'nat' });
    expect(warning?.meta['missingRules']).toEqual(
      expect.arrayContaining([
        'nat PREROUTING -m comment --comment "handle ClusterIPs; NOTE: this must be before the NodePort rules" -j KUBE-PORTALS-CONTAINER',
        expect.stringMatching(/^nat KUBE-NODEPORT-CONTAINER .*--dport 30080 /),
      ]),
    );
    await s.finish();
  });

  it('re-installs them after `iptables -t filter -F`', async () => {
    const s = await setup();
    s.flush('filter');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 300);
    expect(s.proxier.stats).toMatchObject({ syncs: 2, flushesDetected: 1 });
    expect(s.iptables.rules).toContain(NON_LOCAL_JUMP);
    expect(s.warnings()[0]?.meta).toMatchObject({ table: 'filter' });
    await s.finish();
  });

  it('notices a flush of one capture chain that keeps the jumps (`iptables -t nat -F KUBE-PORTALS-CONTAINER`)', async () => {
    const s = await setup();
    s.flush('nat', 'KUBE-PORTALS-CONTAINER');
    await s.advance(SYNC_PERIOD_MS + IPTABLES_FLUSH_SETTLE_MS + 300);
    expect(s.proxier.stats).toMatchObject({ syncs: 2, flushesDetected: 1 });
    expect(s.warnings()[0]?.meta['missingRules']).toEqual([expect.stringMatching(/^nat KUBE-PORTALS-CONTAINER .*-d 10\.96\.0\.10\/32 /)]);
    await s.finish();
  });

  it('costs one check per table and syncPeriod and never resyncs while nothing was flushed', async () => {
    const s = await setup();
    const checksBefore = s.iptables.checks;
    await s.advance(10 * SYNC_PERIOD_MS);
    expect(s.proxier.stats).toMatchObject({ syncs: 1, flushesDetected: 0 });
    expect(s.iptables.payloads).toHaveLength(1);
    expect(s.iptables.checks - checksBefore).toBe(10 * 2); // nat + filter, ten rounds
    expect(s.warnings()).toHaveLength(0);
    // A routine sync (service change) rewrites the chains: still no "flush".
    s.proxier.onServiceAdd(service('dns', '10.96.0.53', [{ name: 'dns', port: 53, protocol: 'UDP' }]));
    await s.advance(3 * SYNC_PERIOD_MS);
    expect(s.proxier.stats).toMatchObject({ syncs: 2, flushesDetected: 0 });
    await s.finish();
  });
});
