import type { ProxyContext } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, advanceSettling } from '@kube-proxy/core/testing';
import { IptablesRestoreError } from '@kube-proxy/netfilter-iptables';
import { AppliedChainMemo, servicePortEndpointChainName, servicePortPolicyClusterChain } from '../render/index.js';
import { IptablesProxier } from './iptables-proxier.js';
import type { V1EndpointSlice, V1Service } from './k8s-types.js';
import type { PortSpec } from './testing/proxier-fixtures.js';
import { context, node, service, settle, slice, TestIptables } from './testing/proxier-fixtures.js';

const HTTP: PortSpec[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }];
const DNS: PortSpec[] = [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353, nodePort: 30053 }];

const WEB = service('ns1', 'web', '10.96.0.10', HTTP);
const WEB_EPS = slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11', '10.244.1.12']);
const DNS_SVC = service('ns2', 'dns', '10.96.0.53', DNS, 'NodePort');
const DNS_EPS = slice('ns2', 'dns', 'dns-1', DNS, ['10.244.1.21', '10.244.1.22']);

const WEB_CHAIN = servicePortPolicyClusterChain('ns1/web:http', 'TCP');
const DNS_CHAIN = servicePortPolicyClusterChain('ns2/dns:dns', 'UDP');
const DNS_SEP_22 = servicePortEndpointChainName('ns2/dns:dns', 'UDP', '10.244.1.22:5353');

interface Setup {
  ctx: ProxyContext & { dryRunSink: { text: string } };
  clock: FakeClock;
  ipt: TestIptables;
  exec: FakeCommandExecutor;
  sysctl: FakeSysctl;
  logger: RecordingLogger;
  proxier: IptablesProxier;
  loop: Promise<void>;
}

async function setup(overrides: Parameters<typeof context>[0] = {}, initial = true): Promise<Setup> {
  const ctx = context(overrides);
  const clock = new FakeClock();
  const ipt = new TestIptables('IPv4');
  const exec = new FakeCommandExecutor().setDefault({
    exitCode: 1,
    stderr: 'conntrack v1.4.7 (conntrack-tools): 0 flow entries have been deleted.\n',
  });
  const sysctl = new FakeSysctl({
    'net/ipv4/conf/all/route_localnet': '0',
    'net/netfilter/nf_conntrack_tcp_be_liberal': '0',
  });
  const logger = new RecordingLogger();
  const proxier = new IptablesProxier({
    family: 'IPv4',
    context: ctx,
    iptables: ipt,
    executor: exec,
    sysctl,
    clock,
    logger,
    dryRunTables: ipt.tables,
    networkInterfaces: () => ({}),
  });
  const loop = proxier.syncLoop();
  const s = { ctx, clock, ipt, exec, sysctl, logger, proxier, loop };
  if (initial) {
    proxier.onServiceAdd(WEB);
    proxier.onServiceAdd(DNS_SVC);
    proxier.onEndpointSliceAdd(WEB_EPS);
    proxier.onEndpointSliceAdd(DNS_EPS);
    proxier.onServicesSynced();
    proxier.onEndpointSlicesSynced();
    await settle();
  }
  return s;
}

/** The tables of a fresh proxier whose first (full) sync sees exactly these objects. */
async function freshTables(objects: { services: V1Service[]; slices: V1EndpointSlice[] }): Promise<string> {
  const s = await setup({}, false);
  for (const svc of objects.services) s.proxier.onServiceAdd(svc);
  for (const sl of objects.slices) s.proxier.onEndpointSliceAdd(sl);
  s.proxier.onServicesSynced();
  s.proxier.onEndpointSlicesSynced();
  await settle();
  const text = s.ipt.tables.saveAll();
  await finish(s);
  return text;
}

const TOP_LEVEL_CHAIN_LINE = /^:KUBE-(SERVICES|EXTERNAL-SERVICES|FORWARD|NODEPORTS|PROXY-FIREWALL|FIREWALL|POSTROUTING|MARK-MASQ) /gm;

async function finish(s: Setup): Promise<void> {
  s.proxier.stop();
  await s.loop;
}

/** Moves the fake clock in steps, letting the async sync work run in between. */
const advance = (s: Setup, ms: number, step = 100): Promise<void> => advanceSettling(s.clock, ms, step);

describe('IptablesProxier', () => {
  it('does not sync before both Services and EndpointSlices are synced; the first sync is full', async () => {
    const s = await setup({}, false);
    s.proxier.onServiceAdd(WEB);
    s.proxier.onEndpointSliceAdd(WEB_EPS);
    s.proxier.onServicesSynced();
    await advance(s, 2000, 500);
    expect(s.ipt.payloads).toHaveLength(0);
    s.proxier.onEndpointSlicesSynced();
    await settle();
    expect(s.ipt.payloads).toHaveLength(1);
    await expect(s.proxier.firstSync()).resolves.toBeUndefined();
    expect(s.proxier.stats).toMatchObject({ syncs: 1, fullSyncs: 1, partialSyncs: 0 });
    expect(s.ipt.lastPayload).toContain(`:${WEB_CHAIN} - [0:0]`);
    // Jump rules are ensured on a full sync.
    expect(s.ipt.tables.rules('nat', 'PREROUTING')).toEqual([
      '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    ]);
    expect(s.ipt.tables.rules('filter', 'FORWARD')).toContain('-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD');
    await finish(s);
  });

  it('writes every service on a full sync and only the changed services on a partial sync', async () => {
    const s = await setup();
    const full = s.ipt.lastPayload;
    expect(full).toContain(`:${WEB_CHAIN} - [0:0]`);
    expect(full).toContain(`:${DNS_CHAIN} - [0:0]`);

    await advance(s, 1000);
    s.proxier.onEndpointSliceUpdate(DNS_EPS, slice('ns2', 'dns', 'dns-1', DNS, ['10.244.1.21']));
    await settle();
    expect(s.ipt.payloads).toHaveLength(2);
    const partial = s.ipt.lastPayload;
    expect(partial).toContain(`:${DNS_CHAIN} - [0:0]`);
    expect(partial).not.toContain(`:${WEB_CHAIN} - [0:0]`);
    expect(partial).not.toContain(`-A ${WEB_CHAIN} `);
    // The service chains not rewritten stay as they were.
    expect(s.ipt.tables.rules('nat', WEB_CHAIN)?.length).toBeGreaterThan(0);
    // The removed endpoint's chain is deleted as stale (found through iptables-save of nat).
    expect(partial).toContain(`-X ${DNS_SEP_22}`);
    expect(s.ipt.tables.chainExists('nat', DNS_SEP_22)).toBe(false);
    expect(s.proxier.stats).toMatchObject({ syncs: 2, fullSyncs: 1, partialSyncs: 1, staleChainsDeleted: 1 });
    await finish(s);
  });

  it('deletes all chains of a deleted service', async () => {
    const s = await setup();
    await advance(s, 1000);
    s.proxier.onServiceDelete(WEB);
    s.proxier.onEndpointSliceDelete(WEB_EPS);
    await settle();
    expect(s.ipt.lastPayload).toContain(`-X ${WEB_CHAIN}`);
    expect(s.ipt.tables.chains('nat').filter((c) => c.startsWith('KUBE-SEP-') || c.startsWith('KUBE-SVC-'))).toEqual(
      [DNS_CHAIN, ...s.ipt.tables.chains('nat').filter((c) => c.startsWith('KUBE-SEP-'))].sort(),
    );
    expect(s.ipt.tables.chainExists('nat', WEB_CHAIN)).toBe(false);
    await finish(s);
  });

  it('keeps the previous rules after a failed restore, logs the failing lines and retries with a full sync after syncPeriod', async () => {
    const s = await setup();
    const before = s.ipt.tables.saveAll();
    await advance(s, 1000);
    // Line 2 is a top-level chain's declaration: written for no service port, so the sync fails
    // (a line of one service port is left out at once instead: iptables-proxier.quarantine.spec.ts).
    s.ipt.failRestores = { count: 1, line: 2 };
    s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']));
    await settle();
    expect(s.ipt.payloads).toHaveLength(2);
    expect(s.ipt.tables.saveAll()).toBe(before);
    expect(s.proxier.stats).toMatchObject({ restoreFailures: 1, partialRestoreFailures: 1, failedSyncs: 1 });
    const entry = s.logger.entries.find((e) => e.message === 'Failed to execute iptables-restore');
    expect(entry?.meta['line']).toBe(2);
    const failed = (s.ipt.payloads[1] ?? '').split('\n');
    expect(failed[1]).not.toMatch(/KUBE-(SVC|SVL|EXT|FW|SEP)-|ns1\//);
    expect(entry?.meta['rules']).toEqual([1, 2, 3, 4, 5].map((n) => `${n}: ${failed[n - 1]}`));

    // Nothing happens before syncPeriod (30s) …
    await advance(s, 28_000, 1000);
    expect(s.ipt.payloads).toHaveLength(2);
    // … then a full sync rewrites everything, including the change that failed.
    await advance(s, 2000, 1000);
    expect(s.ipt.payloads).toHaveLength(3);
    expect(s.ipt.lastPayload).toContain(`:${WEB_CHAIN} - [0:0]`);
    expect(s.ipt.lastPayload).toContain(`:${DNS_CHAIN} - [0:0]`);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, restoreFailures: 1 });
    expect(s.ipt.tables.rules('nat', WEB_CHAIN)?.filter((r) => r.includes('KUBE-SEP-'))).toHaveLength(1);
    await finish(s);
  });

  it('retries with a full sync when the jump rules cannot be set up', async () => {
    const s = await setup({}, false);
    s.ipt.failEnsureRules = 1;
    s.proxier.onServicesSynced();
    s.proxier.onEndpointSlicesSynced();
    await settle();
    expect(s.ipt.payloads).toHaveLength(0);
    expect(s.logger.has('error', 'Failed to ensure chain jumps')).toBe(true);
    await advance(s, 30_000, 1000);
    expect(s.ipt.payloads).toHaveLength(1);
    expect(s.proxier.stats).toMatchObject({ failedSyncs: 1, fullSyncs: 1 });
    await finish(s);
  });

  it('resyncs fully when the canary shows the nat table was flushed (even though mangle survived)', async () => {
    const s = await setup();
    expect(s.ipt.tables.chainExists('nat', 'KUBE-PROXY-CANARY')).toBe(true);
    s.ipt.tables.dropTable('nat'); // iptables -t nat -F; iptables -t nat -X
    await advance(s, 30_000, 1000); // next canary check …
    await advance(s, 5_000); // … waits up to 5 s for the other canaries, then forces a full sync
    await settle();
    expect(s.ipt.payloads).toHaveLength(2);
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, flushesDetected: 1 });
    expect(s.ipt.tables.chainExists('nat', 'KUBE-PROXY-CANARY')).toBe(true);
    expect(s.ipt.tables.chainExists('nat', WEB_CHAIN)).toBe(true);
    expect(s.ipt.tables.rules('nat', 'PREROUTING')).toEqual([
      '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    ]);
    await finish(s);
  });

  it('does not lose a full-sync request (canary) that arrives while a sync is running', async () => {
    const s = await setup();
    await advance(s, 1000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const restore = s.ipt.restore.bind(s.ipt);
    s.ipt.restore = async (payload, options) => {
      await gate;
      return restore(payload, options);
    };
    s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']));
    await settle();
    s.proxier.forceSync(); // the canary saw a flush while the partial sync was writing
    release();
    await advance(s, 1000);
    // The partial sync finished, then the requested full sync ran (not a second, empty partial one).
    expect(s.proxier.stats).toMatchObject({ syncs: 3, fullSyncs: 2, partialSyncs: 1 });
    await finish(s);
  });

  it('does a full sync after a node topology label change and every hour', async () => {
    const s = await setup();
    await advance(s, 1000);
    s.proxier.onNodeAdd(node({ 'topology.kubernetes.io/zone': 'zone-a' }));
    await settle();
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, partialSyncs: 0 });
    await advance(s, 1000);
    s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']));
    await settle();
    expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, partialSyncs: 1 });
    // The runner's maxInterval (1 h) syncs without any change; FullSyncPeriod makes it full.
    await advance(s, 60 * 60 * 1000, 60_000);
    expect(s.proxier.stats.fullSyncs).toBe(3);
    await finish(s);
  });

  it('skips iptables-save in large-cluster mode except once per syncPeriod', async () => {
    const s = await setup({}, false);
    const ips = Array.from({ length: 1010 }, (_, i) => `10.245.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    s.proxier.onServiceAdd(WEB);
    s.proxier.onEndpointSliceAdd(slice('ns1', 'web', 'web-1', HTTP, ips));
    s.proxier.onServicesSynced();
    s.proxier.onEndpointSlicesSynced();
    await settle();
    expect(s.proxier.stats.largeClusterMode).toBe(true);
    expect(s.ipt.saves).toBe(1);
    await advance(s, 1000);
    s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, ips.slice(1)));
    await settle();
    expect(s.proxier.stats.syncs).toBe(2);
    expect(s.ipt.saves).toBe(1);
    await advance(s, 30_000, 1000);
    s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, ips.slice(2)));
    await settle();
    expect(s.proxier.stats.syncs).toBe(3);
    expect(s.ipt.saves).toBe(2);
    await finish(s);
  });

  it('cleans up conntrack entries of removed UDP endpoints after a successful sync', async () => {
    const s = await setup({ dryRun: false });
    // The first sync saw the UDP service become active: its "black hole" entries are flushed.
    expect(s.exec.commandLines()).toEqual(
      expect.arrayContaining(['conntrack -D --orig-dst 10.96.0.53 -p udp', 'conntrack -D -p udp --orig-port-dst 30053']),
    );
    s.exec.calls.length = 0;
    await advance(s, 1000);
    s.proxier.onEndpointSliceUpdate(DNS_EPS, slice('ns2', 'dns', 'dns-1', DNS, ['10.244.1.21']));
    await settle();
    expect(s.exec.commandLines()).toEqual([
      'conntrack -D -p udp --orig-port-dst 30053 --dst-nat 10.244.1.22',
      'conntrack -D --orig-dst 10.96.0.53 --dst-nat 10.244.1.22 -p udp',
    ]);
    // route_localnet was set for localhost NodePorts (IPv4, nodePortAddresses = all).
    expect(s.sysctl.writes).toEqual([{ name: 'net/ipv4/conf/all/route_localnet', value: '1' }]);
    expect(s.ctx.dryRunSink.text).toBe('');
    await finish(s);
  });

  it('skips conntrack after a failed restore', async () => {
    const s = await setup({ dryRun: false });
    s.exec.calls.length = 0;
    await advance(s, 1000);
    s.ipt.failRestores = { count: 1, line: 1 };
    s.proxier.onEndpointSliceUpdate(DNS_EPS, slice('ns2', 'dns', 'dns-1', DNS, ['10.244.1.21']));
    await settle();
    expect(s.exec.calls).toHaveLength(0);
    await finish(s);
  });

  it('in dry-run, prints the state after every sync and leaves the host alone', async () => {
    const s = await setup();
    await advance(s, 1000);
    s.proxier.onEndpointSliceUpdate(WEB_EPS, slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']));
    await settle();
    const out = s.ctx.dryRunSink.text;
    const blocks = out.split(/^(?=# sync )/m);
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(/^# sync 1 full 2000-01-01T00:00:00\.000Z\n\*filter\n:INPUT ACCEPT \[0:0\]\n/);
    expect(blocks[1]).toMatch(/^# sync 2 partial 2000-01-01T00:00:01\.\d{3}Z\n\*filter\n/);
    for (const block of blocks) {
      expect(block).toContain('\nCOMMIT\n*nat\n');
      expect(block.endsWith('COMMIT\n')).toBe(true);
      expect(block).not.toContain('*mangle');
    }
    expect(blocks[1]).toContain(`:${WEB_CHAIN} - [0:0]`);
    expect(s.exec.calls).toHaveLength(0);
    expect(s.sysctl.writes).toHaveLength(0);
    await finish(s);
  });

  it('rejects firstSync when stopped before the first sync; syncLoop resolves', async () => {
    const s = await setup({}, false);
    const first = s.proxier.firstSync();
    s.proxier.stop();
    await expect(first).rejects.toThrow(/stopped before the first sync/);
    await expect(s.loop).resolves.toBeUndefined();
  });

  it('in NodeCIDR mode, takes the local detector from the Node and resyncs fully when it changes', async () => {
    const s = await setup({ config: { detectLocalMode: 'NodeCIDR' } });
    expect(s.proxier.currentLocalDetector).toEqual({ kind: 'none' });
    await advance(s, 1000);
    s.proxier.onNodeAdd(node({}, ['10.244.7.0/24', 'fd00:7::/64']));
    await settle();
    expect(s.proxier.currentLocalDetector).toEqual({ kind: 'cidr', cidr: '10.244.7.0/24' });
    expect(s.proxier.stats.fullSyncs).toBe(2);
    expect(s.ipt.lastPayload).toContain('10.244.7.0/24');
    await finish(s);
  });

  describe('top-level chains left out of partial syncs (AppliedChainMemo)', () => {
    /** Records what AppliedChainMemo.commit returns (no jest globals in these ESM specs). */
    const original = AppliedChainMemo.prototype.commit;
    let commits: boolean[] = [];
    beforeEach(() => {
      commits = [];
      AppliedChainMemo.prototype.commit = function (this: AppliedChainMemo, update) {
        const committed = original.call(this, update);
        commits.push(committed);
        return committed;
      };
    });
    afterEach(() => {
      AppliedChainMemo.prototype.commit = original;
    });

    it('a one-endpoint change writes only that service; the tables equal a fresh full sync', async () => {
      const s = await setup();
      const full = { ...s.proxier.stats };
      expect(s.ipt.lastPayload.match(TOP_LEVEL_CHAIN_LINE)).toHaveLength(10);
      await advance(s, 1000);
      const dnsEps = slice('ns2', 'dns', 'dns-1', DNS, ['10.244.1.21']);
      s.proxier.onEndpointSliceUpdate(DNS_EPS, dnsEps);
      await settle();
      const partial = s.ipt.lastPayload;
      expect(partial.startsWith('*filter\nCOMMIT\n*nat\n')).toBe(true);
      expect(partial.match(TOP_LEVEL_CHAIN_LINE)).toBeNull();
      expect(partial).toContain(`:${DNS_CHAIN} - [0:0]`);
      expect(partial).toContain(`-X ${DNS_SEP_22}`);
      expect(s.proxier.stats).toMatchObject({
        partialSyncs: 1,
        elidedChainsLast: 10,
        filterRulesLast: 0,
        filterRulesTotal: full.filterRulesTotal,
        natRulesTotal: full.natRulesTotal - 3, // the removed endpoint's SVC rule and two SEP rules
      });
      expect(s.ipt.tables.saveAll()).toBe(await freshTables({ services: [WEB, DNS_SVC], slices: [WEB_EPS, dnsEps] }));
      await finish(s);
    });

    it('a service add rewrites KUBE-SERVICES; the tables equal a fresh full sync', async () => {
      const s = await setup();
      await advance(s, 1000);
      const api = service('ns3', 'api', '10.96.0.77', HTTP);
      const apiEps = slice('ns3', 'api', 'api-1', HTTP, ['10.244.1.31']);
      s.proxier.onServiceAdd(api);
      s.proxier.onEndpointSliceAdd(apiEps);
      await settle();
      expect(s.ipt.lastPayload.match(TOP_LEVEL_CHAIN_LINE)).toEqual([':KUBE-SERVICES ']);
      expect(s.ipt.lastPayload.startsWith('*filter\nCOMMIT\n*nat\n:KUBE-SERVICES - [0:0]\n')).toBe(true);
      expect(s.ipt.tables.saveAll()).toBe(await freshTables({ services: [WEB, DNS_SVC, api], slices: [WEB_EPS, DNS_EPS, apiEps] }));
      await finish(s);
    });

    it('after a restore that committed filter but failed in nat, nothing is committed and the next sync is full', async () => {
      const s = await setup();
      commits = [];
      await advance(s, 1000);
      const restore = s.ipt.restore.bind(s.ipt);
      s.ipt.restore = async (payload) => {
        // iptables-restore commits table by table: filter goes in, then nat fails.
        s.ipt.payloads.push(payload);
        s.ipt.tables.restore(payload.slice(0, payload.indexOf('*nat\n')), { noFlush: true });
        // Blamed on the `*nat` line (written for no service port, so the sync fails).
        const nat = payload.slice(0, payload.indexOf('*nat\n')).split('\n').length;
        throw new IptablesRestoreError(`iptables-restore: line ${nat} failed`, 1, `iptables-restore: line ${nat} failed`, nat);
      };
      // WEB loses its endpoints: filter KUBE-SERVICES gains a REJECT, nat KUBE-SERVICES loses a rule.
      const webEmpty = slice('ns1', 'web', 'web-1', HTTP, []);
      s.proxier.onEndpointSliceUpdate(WEB_EPS, webEmpty);
      await settle();
      expect(s.ipt.payloads).toHaveLength(2);
      expect(s.ipt.lastPayload).toMatch(/^\*filter\n:KUBE-SERVICES - \[0:0\]\n/);
      expect(commits).toEqual([]);
      expect(s.proxier.stats).toMatchObject({ restoreFailures: 1, partialRestoreFailures: 1 });

      s.ipt.restore = restore;
      await advance(s, 30_000, 1000);
      expect(s.ipt.payloads).toHaveLength(3);
      expect(s.proxier.stats).toMatchObject({ fullSyncs: 2, elidedChainsLast: 0 });
      expect(s.ipt.lastPayload.match(TOP_LEVEL_CHAIN_LINE)).toHaveLength(10);
      expect(commits).toEqual([true]);
      expect(s.ipt.tables.saveAll()).toBe(await freshTables({ services: [WEB, DNS_SVC], slices: [webEmpty, DNS_EPS] }));

      // Partial syncs leave chains out again, and still reach the same state.
      await advance(s, 1000);
      s.proxier.onEndpointSliceUpdate(webEmpty, WEB_EPS);
      await settle();
      expect(s.proxier.stats).toMatchObject({ partialSyncs: 1, elidedChainsLast: 8 });
      expect(s.ipt.tables.saveAll()).toBe(await freshTables({ services: [WEB, DNS_SVC], slices: [WEB_EPS, DNS_EPS] }));
      await finish(s);
    });

    it('a canary flush during a partial sync clears the memo: that sync cannot commit, the next one is full', async () => {
      const s = await setup();
      commits = [];
      await advance(s, 1000);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const restore = s.ipt.restore.bind(s.ipt);
      s.ipt.restore = async (payload, options) => {
        await gate;
        return restore(payload, options);
      };
      const webOne = slice('ns1', 'web', 'web-1', HTTP, ['10.244.1.11']);
      s.proxier.onEndpointSliceUpdate(WEB_EPS, webOne);
      await settle();
      s.proxier.forceSync();
      release();
      await advance(s, 1000);
      expect(commits).toEqual([false, true]);
      expect(s.proxier.stats).toMatchObject({ partialSyncs: 1, fullSyncs: 2, elidedChainsLast: 0 });
      expect(s.ipt.lastPayload.match(TOP_LEVEL_CHAIN_LINE)).toHaveLength(10);
      expect(s.ipt.tables.saveAll()).toBe(await freshTables({ services: [WEB, DNS_SVC], slices: [webOne, DNS_EPS] }));
      await finish(s);
    });
  });
});
