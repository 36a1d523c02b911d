import type { NetworkInterfaceInfo } from 'node:os';
import type { V1Node, V1NodeAddress } from '@kubernetes/client-node';
import { nullLogger } from '../../host/logger.js';
import { parseNodePortAddresses, resolveNodePortAddresses } from './node-port-addresses.js';
import { NodePortInterfaces, addressesAsInterfaces, nodeObjectAddresses } from './node-port-interfaces.js';

const node = (addresses: V1NodeAddress[], name = 'node-1'): V1Node => ({ metadata: { name }, status: { addresses } });

describe('nodeObjectAddresses', () => {
  it('takes every InternalIP and ExternalIP as written, no names; none without status', () => {
    const n = node([
      { type: 'Hostname', address: 'node-1' },
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'InternalDNS', address: 'node-1.internal' },
      { type: 'ExternalIP', address: '203.0.113.7' },
      { type: 'InternalIP', address: 'FD00::1' },
    ]);
    expect(nodeObjectAddresses(n)).toEqual(['10.0.0.1', '203.0.113.7', 'FD00::1']);
    expect(nodeObjectAddresses(undefined)).toEqual([]);
    expect(nodeObjectAddresses({ metadata: { name: 'node-1' } })).toEqual([]);
  });
});

describe('addressesAsInterfaces', () => {
  it('lets --nodeport-addresses select among the addresses as among a host\'s interfaces', () => {
    const nics = addressesAsInterfaces(['192.168.50.1', '192.168.60.5', 'fd00::5']);
    const v4 = resolveNodePortAddresses(parseNodePortAddresses(['192.168.60.0/24', 'fd00::/64'], 'IPv4', undefined, nullLogger), nics);
    const v6 = resolveNodePortAddresses(parseNodePortAddresses(['192.168.60.0/24', 'fd00::/64'], 'IPv6', undefined, nullLogger), nics);
    expect(v4).toEqual({ all: false, ips: ['192.168.60.5'] });
    expect(v6).toEqual({ all: false, ips: ['fd00::5'] });
  });

  it('writes addresses canonically (an IPv4-mapped one is IPv4) and leaves out text that is no address', () => {
    const infos: NetworkInterfaceInfo[] = addressesAsInterfaces(['FD00::0005', '::ffff:8.8.8.8', 'node-1', ''])().node ?? [];
    expect(infos.map((i) => [i.address, i.family])).toEqual([
      ['fd00::5', 'IPv6'],
      ['8.8.8.8', 'IPv4'],
    ]);
  });
});

describe('NodePortInterfaces', () => {
  const host = () => ({ eth0: [{ address: '172.17.0.2', family: 'IPv4', netmask: '255.255.0.0', mac: '', internal: false, cidr: '172.17.0.2/16' } as NetworkInterfaceInfo] });
  const primaryV4 = (nodeIP: string) => parseNodePortAddresses(['primary'], 'IPv4', nodeIP, nullLogger);

  it('a dry run resolves `primary` against the described node, not the machine it runs on', () => {
    const source = new NodePortInterfaces({ dryRun: true, nodeName: 'node-1', nodeIPs: { IPv4: '192.168.49.2' } }, host);
    expect(resolveNodePortAddresses(primaryV4('192.168.49.2'), source.interfaces())).toEqual({ all: false, ips: ['192.168.49.2'] });
  });

  it('a dry run takes every address of this node\'s Node object and asks for a resync when they change', () => {
    const source = new NodePortInterfaces({ dryRun: true, nodeName: 'node-1', nodeIPs: { IPv4: '192.168.49.2' } }, host);
    const all = parseNodePortAddresses(['192.168.0.0/16'], 'IPv4', undefined, nullLogger);
    expect(source.nodeEvent(node([{ type: 'InternalIP', address: '192.168.49.2' }, { type: 'ExternalIP', address: '192.168.77.7' }]), false)).toBe(true);
    expect(resolveNodePortAddresses(all, source.interfaces())).toEqual({ all: false, ips: ['192.168.49.2', '192.168.77.7'] });
    expect(source.nodeEvent(node([{ type: 'InternalIP', address: '192.168.49.2' }, { type: 'ExternalIP', address: '192.168.77.7' }]), false)).toBe(false);
    expect(source.nodeEvent(node([{ type: 'InternalIP', address: '192.168.9.9' }], 'node-2'), false)).toBe(false);
    expect(source.nodeEvent(node([]), true)).toBe(true);
    expect(resolveNodePortAddresses(all, source.interfaces())).toEqual({ all: false, ips: ['192.168.49.2'] });
  });

  it('a dry run\'s node has its loopback interface: `localhost` selects 127.0.0.1 and ::1 there, as on a real node', () => {
    const source = new NodePortInterfaces({ dryRun: true, nodeName: 'node-1', nodeIPs: { IPv4: '192.168.49.2' } }, host);
    const v4 = parseNodePortAddresses(['primary', 'localhost'], 'IPv4', '192.168.49.2', nullLogger);
    expect(resolveNodePortAddresses(v4, source.interfaces())).toEqual({ all: false, ips: ['192.168.49.2', '127.0.0.1'] });
    const v6 = parseNodePortAddresses(['localhost'], 'IPv6', undefined, nullLogger);
    expect(resolveNodePortAddresses(v6, source.interfaces())).toEqual({ all: false, ips: ['::1'] });
    // The loopback interface is no Node address.
    expect(source.describedAddresses()).toEqual(['192.168.49.2']);
  });

  it('lists a dry run\'s node addresses canonically: resolved node IPs first, a mapped address as IPv4, no names', () => {
    const source = new NodePortInterfaces({ dryRun: true, nodeName: 'node-1', nodeIPs: { IPv4: '::ffff:8.8.8.8' } }, host);
    source.nodeEvent(node([{ type: 'InternalIP', address: 'FD00::0002' }, { type: 'InternalIP', address: 'not-an-ip' }]), false);
    expect(source.describedAddresses()).toEqual(['8.8.8.8', 'fd00::2']);
  });

  it('a real run reads the machine\'s interfaces and never asks for a resync on Node address changes', () => {
    const source = new NodePortInterfaces({ dryRun: false, nodeName: 'node-1', nodeIPs: { IPv4: '192.168.49.2' } }, host);
    expect(source.nodeEvent(node([{ type: 'InternalIP', address: '192.168.49.2' }]), false)).toBe(false);
    expect(resolveNodePortAddresses(primaryV4('192.168.49.2'), source.interfaces())).toEqual({ all: false, ips: [] });
    expect(resolveNodePortAddresses(primaryV4('172.17.0.2'), source.interfaces())).toEqual({ all: false, ips: ['172.17.0.2'] });
  });
});
