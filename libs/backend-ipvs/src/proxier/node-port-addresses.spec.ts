/**
 * Which addresses the proxier hands to node ports, in both kinds of run (issue 20, defects 5 and 6):
 * a dry run renders the Node object's addresses, every one of the proxier's family, filtered by
 * --nodeport-addresses; a real run lists the machine's interfaces (faked here: the real IPVS kernel
 * lives only in the QEMU guest). In both, no address — odd, hostile or of the other family — fails a sync.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import { settle } from '@kube-proxy/core/testing';
import { type NetworkInterfaces } from '@kube-proxy/core';
import { firstSyncServers as firstSync, node, rig, service, service6 as v6Service, slice, slice6 as v6Slice, start } from './testing/proxier-fixtures.js';

const NP_V4 = service('np', '10.96.0.20', { type: 'NodePort', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }] });

function nodePortServers(keys: readonly string[]): string[] {
  return keys.filter((k) => k.includes(':30080/'));
}

describe('IPVS node-port addresses in a dry run: the Node object, every address of the family', () => {
  it('puts a virtual server on each InternalIP and ExternalIP of the family (upstream "multiple nodeIPs")', async () => {
    const r = rig();
    r.proxier.onNodeAdd(node([
      { type: 'Hostname', address: 'node-1' },
      { type: 'InternalIP', address: '192.168.50.1' },
      { type: 'InternalIP', address: '192.168.50.2' },
      { type: 'InternalIP', address: '2001:db8::1:1' },
      { type: 'ExternalIP', address: '203.0.113.7' },
    ]));
    start(r, [NP_V4], [slice('np', ['10.244.3.7'])]);
    expect(nodePortServers(await firstSync(r))).toEqual(['192.168.50.1:30080/TCP', '192.168.50.2:30080/TCP', '203.0.113.7:30080/TCP']);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    r.proxier.stop();
  });

  it("an IPv6-only node run with --bind-address=::1 gets its Node's IPv6 addresses, not none", async () => {
    const r = rig({ nodeIPs: { IPv6: '::1' }, families: ['IPv6'] }, undefined, { family: 'IPv6' });
    r.proxier.onNodeAdd(node([
      { type: 'InternalIP', address: 'fd00::10' },
      { type: 'InternalIP', address: 'fd00::11' },
    ]));
    start(r, [v6Service('np6', 'fd00:96::20')], [v6Slice('np6', ['fd00:244::7'])]);
    expect(nodePortServers(await firstSync(r))).toEqual(['[fd00::10]:30080/TCP', '[fd00::11]:30080/TCP']);
    r.proxier.stop();
  });

  it('SCTP: one virtual server and one KUBE-NODE-PORT-SCTP-HASH entry per node address (upstream TestNodePortIPv6)', async () => {
    const r = rig({ nodeIPs: { IPv6: '2001:db8::1:1' }, families: ['IPv6'] }, undefined, { family: 'IPv6' });
    r.proxier.onNodeAdd(node([
      { type: 'InternalIP', address: '2001:db8::1:1' },
      { type: 'InternalIP', address: '2001:db8::1:2' },
    ]));
    start(r, [v6Service('sctp', '2020::1', 'SCTP')], [v6Slice('sctp', ['2001::1'], 'SCTP')]);
    expect(await firstSync(r)).toEqual(['[2001:db8::1:1]:30080/SCTP', '[2001:db8::1:2]:30080/SCTP', '[2020::1]:80/SCTP']);
    const sets = await r.kernel.memory.readIpsets();
    expect([...(sets.get('KUBE-6-NODE-PORT-SCTP-HASH') ?? [])].sort()).toEqual([
      '2001:db8::1:1,sctp:30080',
      '2001:db8::1:2,sctp:30080',
    ]);
    r.proxier.stop();
  });

  it('SCTP with externalTrafficPolicy Local: both hash sets list every node address (upstream TestNodePortIPv4)', async () => {
    const r = rig({ nodeIPs: { IPv4: '100.101.102.103' } });
    r.proxier.onNodeAdd(node([
      { type: 'InternalIP', address: '100.101.102.103' },
      { type: 'InternalIP', address: '100.101.102.104' },
    ]));
    const sctp = service('sctp', '10.20.30.41', {
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 80, protocol: 'SCTP', targetPort: 8080, nodePort: 30080 }],
    });
    start(r, [sctp], [slice('sctp', ['10.180.0.1'], 'SCTP')]);
    expect(nodePortServers(await firstSync(r))).toEqual(['100.101.102.103:30080/SCTP', '100.101.102.104:30080/SCTP']);
    const sets = await r.kernel.memory.readIpsets();
    const entries = ['100.101.102.103,sctp:30080', '100.101.102.104,sctp:30080'];
    expect([...(sets.get('KUBE-NODE-PORT-SCTP-HASH') ?? [])].sort()).toEqual(entries);
    expect([...(sets.get('KUBE-NODE-PORT-LOCAL-SCTP-HASH') ?? [])].sort()).toEqual(entries);
    r.proxier.stop();
  });

  it("--nodeport-addresses selects among the Node's addresses, not the machine's interfaces", async () => {
    const r = rig({ config: { nodePortAddresses: ['192.168.60.0/24'] } });
    r.proxier.onNodeAdd(node([
      { type: 'InternalIP', address: '192.168.50.1' },
      { type: 'InternalIP', address: '192.168.60.5' },
      { type: 'InternalIP', address: '192.168.60.6' },
    ]));
    start(r, [NP_V4], [slice('np', ['10.244.3.7'])]);
    expect(nodePortServers(await firstSync(r))).toEqual(['192.168.60.5:30080/TCP', '192.168.60.6:30080/TCP']);
    r.proxier.stop();
  });

  it('follows the Node: an address added later gets its virtual server on the next sync', async () => {
    const r = rig();
    const before = node([{ type: 'InternalIP', address: '192.168.50.1' }]);
    r.proxier.onNodeAdd(before);
    start(r, [NP_V4], [slice('np', ['10.244.3.7'])]);
    expect(nodePortServers(await firstSync(r))).toEqual(['192.168.50.1:30080/TCP']);
    r.proxier.onNodeUpdate(before, node([{ type: 'InternalIP', address: '192.168.50.1' }, { type: 'InternalIP', address: '192.168.50.9' }]));
    await r.clock.advance(2000);
    await settle();
    const keys = (await r.kernel.memory.readVirtualServers('IPv4')).map((vs) => vs.key);
    expect(nodePortServers(keys)).toEqual(['192.168.50.1:30080/TCP', '192.168.50.9:30080/TCP']);
    r.proxier.stop();
  });
});

/** A Node (and resolved node IPs) full of addresses no node port can use, plus a few good ones. */
const ODD = ['::ffff:8.8.8.8', 'fe80::1', '127.0.0.1', '::1', '0.0.0.0', '::', '192.168.50.1', '192.168.50.1', '010.000.000.007', 'FD00::AB', 'fd00::ab', 'not-an-ip'];

describe('IPVS node-port addresses never fail a sync (defect 5)', () => {
  it.each([
    // ::ffff:8.8.8.8 is the IPv4 address 8.8.8.8, as Go reads a Node's addresses: an IPv4 node port.
    ['IPv4', '8.8.8.8:30080/TCP,192.168.50.1:30080/TCP,10.0.0.7:30080/TCP'],
    ['IPv6', '[fd00::ab]:30080/TCP'],
  ] as const)('dry run, %s: odd Node addresses (link-local, loopback, unspecified, duplicates) are skipped, a mapped one is IPv4', async (family, expected) => {
    // A node IP as written (resolveNodeIPs now canonicalises it; the proxier must not rely on that).
    const r = rig({ nodeIPs: { IPv4: '::ffff:8.8.8.8', IPv6: 'fe80::1' }, families: ['IPv4', 'IPv6'] }, undefined, { family });
    r.proxier.onNodeAdd(node(ODD.map((address) => ({ type: 'InternalIP', address }))));
    const svc = family === 'IPv4' ? NP_V4 : v6Service('np', 'fd00:96::20');
    start(r, [svc], [family === 'IPv4' ? slice('np', ['10.244.3.7']) : v6Slice('np', ['fd00:244::7'])]);
    const keys = await firstSync(r);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    expect(r.proxier.stats.syncs).toBe(1);
    expect(nodePortServers(keys).sort()).toEqual(expected.split(',').sort());
    r.proxier.stop();
  });

  it('real run (interfaces faked): lo, link-local, kube-ipvs0, IPv4-mapped and other-family addresses are skipped', async () => {
    const iface = (address: string, family: 'IPv4' | 'IPv6'): NetworkInterfaceInfo =>
      family === 'IPv6'
        ? { address, family, netmask: '', internal: false, mac: '00:00:00:00:00:02', cidr: null, scopeid: 0 }
        : { address, family, netmask: '', internal: false, mac: '00:00:00:00:00:02', cidr: null };
    const interfaces: NetworkInterfaces = () => ({
      lo: [iface('127.0.0.1', 'IPv4'), iface('::1', 'IPv6')],
      eth0: [iface('10.0.0.1', 'IPv4'), iface('fd00::1', 'IPv6'), iface('fe80::1%eth0', 'IPv6'), iface('fd00::1', 'IPv6')],
      eth1: [iface('::ffff:1.2.3.4', 'IPv6'), iface('fd00::2', 'IPv6')],
      'kube-ipvs0': [iface('fd00:96::20', 'IPv6')],
    });
    const r = rig({ dryRun: false, nodeIPs: { IPv6: 'fd00::1' }, families: ['IPv6'] }, undefined, { family: 'IPv6', networkInterfaces: interfaces });
    start(r, [v6Service('np', 'fd00:96::20')], [v6Slice('np', ['fd00:244::7'])]);
    const keys = await firstSync(r);
    expect(r.proxier.stats.failedSyncs).toBe(0);
    expect(nodePortServers(keys)).toEqual(['[fd00::1]:30080/TCP', '[fd00::2]:30080/TCP']);
    r.proxier.stop();
  });
});
