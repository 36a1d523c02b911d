/**
 * Objects carrying addresses the kernel refuses where IPVS mode puts them (state/kernel-refused-
 * addresses.ts): syntax allows a Service `::`, `::1` or an IPv6 multicast address as an external
 * or load-balancer IP, and an EndpointSlice 0.0.0.0 or 224.0.0.5 as an endpoint. One refused line
 * stopped the family's `ip -batch` / `ipset restore` or failed its `ipvsadm --restore`, so one such
 * object failed every sync of its family. Now the address is left out of that one place, the rest
 * of the object is served, and the proxier says so once.
 */
import { advanceSettling } from '@kube-proxy/core/testing';
import { firstSyncServers, rig, service, service6, slice, slice6, start } from './testing/proxier-fixtures.js';

const WARNING = 'Left out addresses the kernel refuses in IPVS mode';

describe('IPVS addresses the kernel refuses never fail a sync', () => {
  it('external and load-balancer IPs ::, ::1 and ff02::1: :: left out, the others served but not bound', async () => {
    const r = rig({ nodeIPs: { IPv6: 'fd00::1' }, families: ['IPv6'] }, undefined, { family: 'IPv6' });
    const odd = { ...service6('odd', 'fd00:96::30'), status: { loadBalancer: { ingress: [{ ip: 'ff02::1' }, { ip: 'fd00:203::9' }] } } };
    odd.spec = { ...odd.spec, type: 'LoadBalancer', externalIPs: ['::', '::1'] };
    start(r, [odd, service6('web', 'fd00:96::31')], [slice6('odd', ['fd00:244::7']), slice6('web', ['fd00:244::8'])]);
    const keys = await firstSyncServers(r);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    expect(keys.filter((k) => k.endsWith(':80/TCP'))).toEqual(['[::1]:80/TCP', '[fd00:203::9]:80/TCP', '[fd00:96::30]:80/TCP', '[fd00:96::31]:80/TCP', '[ff02::1]:80/TCP']);
    expect(await r.kernel.memory.readBoundAddresses('IPv6')).toEqual(['fd00:203::9', 'fd00:96::30', 'fd00:96::31']);
    const warning = r.logger.entries.find((e) => e.message === WARNING);
    expect(warning?.meta['skipped']).toEqual([
      'external IP ::: the unspecified address',
      'kube-ipvs0 address ::1: IPv6 loopback',
      'kube-ipvs0 address ff02::1: IPv6 multicast',
    ]);
    r.proxier.stop();
  });

  it('an external IP of 0.0.0.0 is left out: no virtual server, set entry or bind, nothing rewritten by the next sync', async () => {
    const r = rig();
    start(r, [service('any', '10.96.0.40', { externalIPs: ['0.0.0.0'] })], [slice('any', ['10.244.1.5'])]);
    expect(await firstSyncServers(r)).toEqual(['10.96.0.40:80/TCP']);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    r.proxier.sync();
    await advanceSettling(r.clock, 2000);
    expect(r.proxier.stats.syncs).toBeGreaterThanOrEqual(2);
    expect(r.proxier.stats.lastWrites).toEqual({ ipvsadm: 0, ipset: 0, iptables: 0, link: 0 });
    expect(r.logger.messages('warn').filter((m) => m === WARNING)).toHaveLength(1);
    r.proxier.stop();
  });

  it('endpoints 0.0.0.0, 224.0.0.5 and 255.255.255.255 are left out of the real servers; the others serve', async () => {
    const r = rig();
    start(r, [service('web', '10.96.0.10')], [slice('web', ['10.244.1.5', '0.0.0.0', '224.0.0.5', '255.255.255.255', '127.0.0.1'])]);
    await firstSyncServers(r);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    const [vs] = await r.kernel.memory.readVirtualServers('IPv4');
    expect(vs?.realServers.map((rs) => rs.key)).toEqual(['10.244.1.5:8080', '127.0.0.1:8080']);
    r.proxier.stop();
  });
});
