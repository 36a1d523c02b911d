/**
 * Service addresses the kernel will not put on kube-ipvs0 (state/bindable-address.ts): a Service may
 * carry `::`, `::1` or an IPv6 multicast address as an external or load-balancer IP (syntax allows
 * it). Binding one stops the family's whole `ip -batch`, so one such Service failed every sync of
 * its family; now it is served by IPVS, not bound, and reported once.
 */
import { advanceSettling } from '@kube-proxy/core';
import { firstSyncServers, rig, service, service6, slice, slice6, start } from './testing/proxier-fixtures.js';

describe('IPVS service addresses kube-ipvs0 cannot hold never fail a sync', () => {
  it('external and load-balancer IPs ::, ::1 and ff02::1 are served but not bound; the other VIPs are bound', async () => {
    const r = rig({ nodeIPs: { IPv6: 'fd00::1' }, families: ['IPv6'] }, undefined, { family: 'IPv6' });
    const odd = { ...service6('odd', 'fd00:96::30'), status: { loadBalancer: { ingress: [{ ip: 'ff02::1' }, { ip: 'fd00:203::9' }] } } };
    odd.spec = { ...odd.spec, type: 'LoadBalancer', externalIPs: ['::', '::1'] };
    start(r, [odd, service6('web', 'fd00:96::31')], [slice6('odd', ['fd00:244::7']), slice6('web', ['fd00:244::8'])]);
    const keys = await firstSyncServers(r);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    expect(keys).toEqual(expect.arrayContaining(['[::1]:80/TCP', '[::]:80/TCP', '[ff02::1]:80/TCP', '[fd00:203::9]:80/TCP']));
    expect(await r.kernel.memory.readBoundAddresses('IPv6')).toEqual(['fd00:203::9', 'fd00:96::30', 'fd00:96::31']);
    expect(r.logger.messages('warn')).toContain('Service addresses kube-ipvs0 cannot hold are served by IPVS but not bound');
    r.proxier.stop();
  });

  it('an external IP of 0.0.0.0 (taken by the kernel, never listed back) is not bound again by every sync', async () => {
    const r = rig();
    start(r, [service('any', '10.96.0.40', { externalIPs: ['0.0.0.0'] })], [slice('any', ['10.244.1.5'])]);
    expect(await firstSyncServers(r)).toEqual(['0.0.0.0:80/TCP', '10.96.0.40:80/TCP']);
    r.proxier.sync();
    await advanceSettling(r.clock, 2000);
    expect(r.proxier.stats.syncs).toBeGreaterThanOrEqual(2);
    expect(r.proxier.stats.lastWrites).toEqual({ ipvsadm: 0, ipset: 0, iptables: 0, link: 0 });
    r.proxier.stop();
  });
});
