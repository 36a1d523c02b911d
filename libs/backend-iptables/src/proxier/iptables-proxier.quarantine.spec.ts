// Issue 20 in iptables mode: a restore iptables-restore refuses on a line written for one service
// port names that Service in the log and the others are programmed at once without it; it is tried
// again when it changes and on the next full sync. TestIptables refuses the lines of `ns/bad` as
// iptables-restore refuses a line ("Error occurred at line: N").
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, advanceSettling } from '@kube-proxy/core/testing';
import { FULL_SYNC_PERIOD_MS } from '@kube-proxy/core';
import { IptablesProxier } from './iptables-proxier.js';
import type { PortSpec } from './testing/proxier-fixtures.js';
import { context, service, settle, slice, TestIptables } from './testing/proxier-fixtures.js';

const HTTP: PortSpec[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }];

async function setup(refused: (line: string) => boolean) {
  const clock = new FakeClock();
  const ipt = new TestIptables('IPv4');
  const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: '0 flow entries have been deleted.\n' });
  const sysctl = new FakeSysctl({ 'net/ipv4/conf/all/route_localnet': '0', 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' });
  const logger = new RecordingLogger();
  const proxier = new IptablesProxier({ family: 'IPv4', context: context(), iptables: ipt, executor: exec, sysctl, clock, logger, dryRunTables: ipt.tables, networkInterfaces: () => ({}) });
  ipt.refuseLine = refused;
  const loop = proxier.syncLoop();
  const add = (name: string, ip: string, endpoints: string[]): void => {
    proxier.onServiceAdd(service('ns', name, ip, HTTP));
    if (endpoints.length > 0) proxier.onEndpointSliceAdd(slice('ns', name, `${name}-1`, HTTP, endpoints));
  };
  /** Both sources report synced; resolves once the first sync (and any retry without a refused port) settled. */
  const synced = async (): Promise<void> => {
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await settle();
  };
  const finish = async (): Promise<void> => {
    proxier.stop();
    await loop;
  };
  return { clock, ipt, logger, proxier, add, synced, finish };
}

/** Names of the services with a cluster-IP rule in the kernel's nat table. */
function programmed(ipt: TestIptables): string[] {
  return (ipt.tables.rules('nat', 'KUBE-SERVICES') ?? [])
    .map((r) => /--comment "?ns\/(\w+):http cluster IP/.exec(r)?.[1])
    .filter((n): n is string => n !== undefined)
    .sort();
}

const refuseBad = (line: string): boolean => line.includes('ns/bad:http');

describe('IptablesProxier: a service port iptables-restore refuses', () => {
  it('is named in the log, and the others are programmed in the same sync', async () => {
    const s = await setup(refuseBad);
    s.add('good1', '10.96.0.1', ['10.244.1.1']);
    s.add('bad', '10.96.0.2', ['10.244.1.2']);
    s.add('good2', '10.96.0.3', ['10.244.1.3']);
    await s.synced();
    expect(programmed(s.ipt)).toEqual(['good1', 'good2']);
    expect(s.proxier.stats).toMatchObject({ syncs: 1, restoreFailures: 1, quarantinedServicePorts: 1, failedSyncs: 0 });
    const entry = s.logger.entries.find((e) => e.message.includes('programming the others without it'));
    expect(entry?.level).toBe('error');
    expect(entry?.meta).toMatchObject({ service: 'ns/bad', servicePort: 'ns/bad:http' });
    expect(String((entry?.meta['rules'] as string[]).join('\n'))).toContain('ns/bad:http');
    await s.finish();
  });

  it('maps a refused rule with no chain of the service (a no-endpoints REJECT) by its comment', async () => {
    const s = await setup((line) => line.includes('ns/bad:http has no endpoints'));
    s.add('good1', '10.96.0.1', ['10.244.1.1']);
    s.add('bad', '10.96.0.2', []);
    await s.synced();
    expect(s.proxier.stats).toMatchObject({ syncs: 1, quarantinedServicePorts: 1 });
    expect(programmed(s.ipt)).toEqual(['good1']);
    expect(s.ipt.tables.saveAll()).not.toContain('ns/bad:http');
    await s.finish();
  });

  it('is tried again when its Service changes, and on the next full sync', async () => {
    const s = await setup(refuseBad);
    s.add('good1', '10.96.0.1', ['10.244.1.1']);
    s.add('bad', '10.96.0.2', ['10.244.1.2']);
    await s.synced();
    s.ipt.refuseLine = undefined;
    // An unrelated change: a partial sync that still leaves it out.
    s.add('good3', '10.96.0.4', ['10.244.1.4']);
    await advanceSettling(s.clock, 2000, 500);
    expect(programmed(s.ipt)).toEqual(['good1', 'good3']);
    // Its endpoints change: tried again.
    s.proxier.onEndpointSliceUpdate(slice('ns', 'bad', 'bad-1', HTTP, ['10.244.1.2']), slice('ns', 'bad', 'bad-1', HTTP, ['10.244.1.5']));
    await advanceSettling(s.clock, 2000, 500);
    expect(programmed(s.ipt)).toEqual(['bad', 'good1', 'good3']);
    await s.finish();
  });

  it('a transient refusal ends with the next full sync', async () => {
    const s = await setup(refuseBad);
    s.add('good1', '10.96.0.1', ['10.244.1.1']);
    s.add('bad', '10.96.0.2', ['10.244.1.2']);
    await s.synced();
    s.ipt.refuseLine = undefined;
    // Periodic syncs are partial until a full one is due (more than FULL_SYNC_PERIOD_MS after the last).
    for (let i = 0; i < 6 && s.proxier.stats.fullSyncs < 2; i++) {
      await advanceSettling(s.clock, FULL_SYNC_PERIOD_MS / 2, 60_000);
      if (s.proxier.stats.fullSyncs < 2) expect(programmed(s.ipt)).toEqual(['good1']);
    }
    expect(s.proxier.stats.fullSyncs).toBe(2);
    expect(programmed(s.ipt)).toEqual(['bad', 'good1']);
    await s.finish();
  });

  it('a refused line of no service port still fails the sync, retried a sync period later', async () => {
    const s = await setup((line) => line.startsWith(':KUBE-MARK-MASQ'));
    s.add('good1', '10.96.0.1', ['10.244.1.1']);
    await s.synced();
    expect(s.proxier.stats).toMatchObject({ syncs: 0, failedSyncs: 1, quarantinedServicePorts: 0 });
    expect(s.logger.entries.some((e) => e.message === 'Failed to execute iptables-restore')).toBe(true);
    await s.finish();
  });
});
