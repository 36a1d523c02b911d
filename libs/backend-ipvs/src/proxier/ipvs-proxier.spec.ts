import { advanceSettling, settle } from '@kube-proxy/core/testing';
import { rig, service, slice, start, type Rig } from './testing/proxier-fixtures.js';

const WEB = service('web', '10.96.0.10');
const NODEPORT = service('np', '10.96.0.20', { type: 'NodePort', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }] });

async function running(r: Rig): Promise<void> {
  void r.proxier.syncLoop();
  await settle();
}

async function dump(r: Rig): Promise<{ ipvs: string[]; bound: string[] | null; sets: Map<string, string[]> }> {
  const ipvs: string[] = [];
  for (const vs of await r.kernel.memory.readVirtualServers('IPv4')) {
    ipvs.push(`${vs.key} ${vs.scheduler}${vs.persistenceTimeout ? ` p${vs.persistenceTimeout}` : ''} -> ${vs.realServers.map((s) => `${s.key}w${s.weight}`).join(',')}`);
  }
  return { ipvs, bound: await r.kernel.memory.readBoundAddresses('IPv4'), sets: await r.kernel.memory.readIpsets() };
}

describe('IpvsProxier', () => {
  it('programs virtual servers, ipsets, kube-ipvs0 and the iptables skeleton on the first sync', async () => {
    const r = rig();
    start(r, [WEB, NODEPORT], [slice('web', ['10.244.1.5', '10.244.2.6']), slice('np', ['10.244.3.7'])]);
    await running(r);
    await r.proxier.firstSync();
    const d = await dump(r);
    expect(d.ipvs).toEqual([
      '10.96.0.10:80/TCP rr -> 10.244.1.5:8080w1,10.244.2.6:8080w1',
      '10.96.0.20:80/TCP rr -> 10.244.3.7:8080w1',
      '192.168.50.1:30080/TCP rr -> 10.244.3.7:8080w1',
    ]);
    expect(d.bound).toEqual(['10.96.0.10', '10.96.0.20']);
    expect(d.sets.get('KUBE-CLUSTER-IP')?.sort()).toEqual(['10.96.0.10,tcp:80', '10.96.0.20,tcp:80']);
    expect(d.sets.get('KUBE-NODE-PORT-TCP')).toEqual(['30080']);
    expect(d.sets.get('KUBE-IPVS-IPS')?.sort()).toEqual(['10.96.0.10', '10.96.0.20']);
    const nat = r.tables.saveAll(['nat']);
    expect(nat).toMatch(/^-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES$/m);
    expect(nat).toMatch(/^-A KUBE-SERVICES .*--match-set KUBE-CLUSTER-IP dst,dst/m);
    expect(r.proxier.stats.syncs).toBe(1);
    r.proxier.stop();
  });

  it('a sync whose state did not change writes nothing (one read-back, zero writes)', async () => {
    const r = rig();
    start(r, [WEB], [slice('web', ['10.244.1.5'])]);
    await running(r);
    await r.proxier.firstSync();
    const writes = r.kernel.writes.length;
    const restores = r.proxier.stats.iptablesRestores;
    const reads = r.kernel.reads;
    r.proxier.sync();
    await advanceSettling(r.clock, 2000);
    expect(r.proxier.stats.syncs).toBeGreaterThanOrEqual(2);
    expect(r.kernel.reads).toBeGreaterThan(reads);
    expect(r.kernel.writes.length).toBe(writes);
    expect(r.proxier.stats.iptablesRestores).toBe(restores);
    expect(r.proxier.stats.lastWrites).toEqual({ ipvsadm: 0, ipset: 0, iptables: 0, link: 0 });
    r.proxier.stop();
  });

  it('one endpoint change writes one real-server line and nothing else', async () => {
    const r = rig();
    start(r, [WEB], [slice('web', ['10.244.1.5'])]);
    await running(r);
    await r.proxier.firstSync();
    const before = r.kernel.writes.length;
    r.proxier.onEndpointSliceUpdate(slice('web', ['10.244.1.5']), slice('web', ['10.244.1.5', '10.244.2.6']));
    await advanceSettling(r.clock, 2000);
    expect(r.kernel.writes.slice(before)).toEqual([{ tool: 'ipvsadm', text: '-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 1\n' }]);
    r.proxier.stop();
  });

  it('graceful termination: a removed TCP endpoint goes to weight 0 while connected, and is deleted once drained', async () => {
    const r = rig();
    start(r, [WEB], [slice('web', ['10.244.1.5', '10.244.2.6'])]);
    await running(r);
    await r.proxier.firstSync();
    r.kernel.setConnections('10.96.0.10:80/TCP', '10.244.1.5:8080', 1, 2);
    r.proxier.onEndpointSliceUpdate(slice('web', ['10.244.1.5', '10.244.2.6']), slice('web', ['10.244.2.6']));
    await advanceSettling(r.clock, 2000);
    expect((await dump(r)).ipvs).toEqual(['10.96.0.10:80/TCP rr -> 10.244.1.5:8080w0,10.244.2.6:8080w1']);
    expect(r.proxier.stats.terminatingRealServers).toBe(1);
    // Still connected at the periodic sync: stays at weight 0, nothing written.
    const writes = r.kernel.writes.length;
    await advanceSettling(r.clock, 31_000, 1000);
    expect(r.kernel.writes.length).toBe(writes);
    // Drained: the next periodic sync deletes it.
    r.kernel.setConnections('10.96.0.10:80/TCP', '10.244.1.5:8080', 0, 0);
    await advanceSettling(r.clock, 31_000, 1000);
    expect((await dump(r)).ipvs).toEqual(['10.96.0.10:80/TCP rr -> 10.244.2.6:8080w1']);
    expect(r.kernel.writes.at(-1)).toEqual({ tool: 'ipvsadm', text: '-d -t 10.96.0.10:80 -r 10.244.1.5:8080\n' });
    r.proxier.stop();
  });

  it('a removed UDP endpoint is deleted at once, connections or not', async () => {
    const r = rig();
    const dns = service('dns', '10.96.0.53', { ports: [{ name: 'http', port: 53, protocol: 'UDP', targetPort: 5353 }] });
    start(r, [dns], [slice('dns', ['10.244.1.5', '10.244.2.6'], 'UDP', 5353)]);
    await running(r);
    await r.proxier.firstSync();
    r.kernel.setConnections('10.96.0.53:53/UDP', '10.244.1.5:5353', 0, 5);
    r.proxier.onEndpointSliceUpdate(slice('dns', ['10.244.1.5', '10.244.2.6'], 'UDP', 5353), slice('dns', ['10.244.2.6'], 'UDP', 5353));
    await advanceSettling(r.clock, 2000);
    expect((await dump(r)).ipvs).toEqual(['10.96.0.53:53/UDP rr -> 10.244.2.6:5353w1']);
    r.proxier.stop();
  });

  it('a deleted service loses its virtual server, set entries and VIP; a foreign virtual server goes too unless excluded', async () => {
    const r = rig({ config: { ipvs: { ...rig().context.config.ipvs, excludeCIDRs: ['192.168.99.0/24'] } } });
    await r.kernel.memory.applyIpvsadm('-A -t 192.168.99.7:443 -s rr\n-A -t 172.16.0.9:443 -s rr\n');
    start(r, [WEB], [slice('web', ['10.244.1.5'])]);
    await running(r);
    await r.proxier.firstSync();
    expect((await dump(r)).ipvs).toEqual(['10.96.0.10:80/TCP rr -> 10.244.1.5:8080w1', '192.168.99.7:443/TCP rr -> ']);
    r.proxier.onServiceDelete(WEB);
    await advanceSettling(r.clock, 2000);
    const d = await dump(r);
    expect(d.ipvs).toEqual(['192.168.99.7:443/TCP rr -> ']);
    expect(d.bound).toEqual([]);
    expect(d.sets.get('KUBE-CLUSTER-IP')).toEqual([]);
    r.proxier.stop();
  });

  it('repairs what someone else removed at the next periodic sync (read-back is the truth)', async () => {
    const r = rig();
    start(r, [WEB], [slice('web', ['10.244.1.5'])]);
    await running(r);
    await r.proxier.firstSync();
    await r.kernel.memory.applyIpvsadm('-D -t 10.96.0.10:80\n');
    await r.kernel.memory.applyIpset('flush KUBE-CLUSTER-IP\n');
    await r.kernel.memory.applyLinkChanges({ createLink: false, add: [], remove: ['10.96.0.10'] });
    await advanceSettling(r.clock, 31_000, 1000);
    const d = await dump(r);
    expect(d.ipvs).toEqual(['10.96.0.10:80/TCP rr -> 10.244.1.5:8080w1']);
    expect(d.sets.get('KUBE-CLUSTER-IP')).toEqual(['10.96.0.10,tcp:80']);
    expect(d.bound).toEqual(['10.96.0.10']);
    r.proxier.stop();
  });

  it('a failed ipvsadm batch fails the sync, which is retried and converges', async () => {
    const r = rig();
    r.kernel.failIpvsadm = 1;
    start(r, [WEB], [slice('web', ['10.244.1.5'])]);
    await running(r);
    expect(r.proxier.stats.failedSyncs).toBe(1);
    // One message for an unexpected failure in every mode (the engine's), then the engine's "Sync failed".
    expect(r.logger.entries.some((e) => e.message === 'Failed to sync ipvs rules')).toBe(true);
    expect(r.logger.entries.some((e) => e.message === 'Sync failed')).toBe(true);
    await advanceSettling(r.clock, 31_000, 1000);
    await r.proxier.firstSync();
    expect((await dump(r)).ipvs).toEqual(['10.96.0.10:80/TCP rr -> 10.244.1.5:8080w1']);
    r.proxier.stop();
  });

  it('applies the scheduler and the ClientIP affinity timeout (persistence) to the virtual server', async () => {
    const r = rig({ config: { ipvs: { ...rig().context.config.ipvs, scheduler: 'wlc' } } });
    start(r, [service('web', '10.96.0.10', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } })], [slice('web', ['10.244.1.5'])]);
    await running(r);
    await r.proxier.firstSync();
    expect((await dump(r)).ipvs).toEqual(['10.96.0.10:80/TCP wlc p600 -> 10.244.1.5:8080w1']);
    r.proxier.stop();
  });

  it('--dry-run prints the # sync line and the four sections with exactly their header lines', async () => {
    const r = rig();
    start(r, [WEB], [slice('web', ['10.244.1.5'])]);
    await running(r);
    await r.proxier.firstSync();
    const lines = r.context.dryRunSink.text.split('\n');
    expect(lines[0]).toMatch(/^# sync 1 full \d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(lines.filter((l) => l.startsWith('# '))).toEqual(['# sync 1 full ' + lines[0].split(' ')[4], '# ipvs', '# ipset', '# kube-ipvs0', '# iptables']);
    const section = (name: string) => {
      const i = lines.indexOf(name);
      const next = lines.findIndex((l, j) => j > i && l.startsWith('# '));
      return lines.slice(i + 1, next === -1 ? undefined : next).filter((l) => l !== '');
    };
    expect(section('# ipvs')).toEqual(['-A -t 10.96.0.10:80 -s rr', '-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1']);
    expect(section('# ipset')).toContain('create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536');
    expect(section('# ipset')).toContain('add KUBE-CLUSTER-IP 10.96.0.10,tcp:80');
    expect(section('# kube-ipvs0')).toEqual(['10.96.0.10/32']);
    expect(section('# iptables')).toContain('*nat');
    expect(section('# iptables')).toContain('COMMIT');
    r.proxier.stop();
  });
});
