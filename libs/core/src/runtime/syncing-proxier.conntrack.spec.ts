/**
 * The sync engine's conntrack call site: the first successful sync reconciles with the kernel's table
 * (a restart keeps the UDP flows of unchanged endpoints, upstream #122740); later syncs clear by their
 * own changes.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { ConntrackCleaner } from '../conntrack/conntrack-cleaner.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeCommandExecutor, RecordingLogger } from '../testing/host-fakes.js';
import { settle } from '../testing/settle.js';
import { SyncingProxier } from './syncing-proxier.js';
import { newSyncStats, type SyncResult, type SyncStats } from './sync-types.js';

class UDPProxier extends SyncingProxier {
  readonly stats: SyncStats = newSyncStats();

  constructor(exec: FakeCommandExecutor) {
    const logger = new RecordingLogger();
    super({
      mode: 'scripted',
      family: 'IPv4',
      nodeName: 'node-1',
      logger,
      observers: {},
      clock: new FakeClock(),
      syncPeriodMs: 30_000,
      minSyncPeriodMs: 0,
      conntrack: new ConntrackCleaner({ family: 'IPv4', executor: exec, logger }),
    });
  }

  protected async syncOnce(): Promise<SyncResult> {
    return { outcome: 'synced' };
  }
}

const DNS: V1Service = {
  metadata: { name: 'dns', namespace: 'kube-system' },
  spec: { clusterIP: '10.96.0.53', ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 }] },
};

function slice(ips: string[]): V1EndpointSlice {
  return {
    metadata: { name: 'dns-1', namespace: 'kube-system', labels: { 'kubernetes.io/service-name': 'dns' } },
    addressType: 'IPv4',
    ports: [{ name: 'dns', port: 5353, protocol: 'UDP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } })),
  };
}

const flow = (sport: number, endpoint: string): string =>
  `udp      17 29 src=10.244.1.13 dst=10.96.0.53 sport=${sport} dport=53 src=${endpoint} dst=10.244.1.13 sport=5353 dport=${sport} mark=0 use=1`;

describe('SyncingProxier conntrack cleanup', () => {
  it('first sync: lists and keeps flows of serving endpoints (no flush by service IP); a later endpoint removal clears its flows', async () => {
    const exec = new FakeCommandExecutor()
      .setDefault({})
      .on((call) => call.args[0] === '-L', { stdout: `${flow(40000, '10.244.1.11')}\n${flow(40001, '10.244.1.12')}\n` });
    const proxier = new UDPProxier(exec);
    const loop = proxier.syncLoop();
    proxier.onServiceAdd(DNS);
    const first = slice(['10.244.1.11', '10.244.1.12']);
    proxier.onEndpointSliceAdd(first);
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await proxier.firstSync();
    await settle();
    expect(exec.commandLines()).toEqual(['conntrack -L -p udp -f ipv4']);

    exec.calls.length = 0;
    proxier.onEndpointSliceUpdate(first, slice(['10.244.1.11']));
    await proxier.syncProxyRules();
    expect(exec.commandLines()).toEqual(['conntrack -D --orig-dst 10.96.0.53 --dst-nat 10.244.1.12 -p udp']);
    proxier.stop();
    await loop;
  });
});
