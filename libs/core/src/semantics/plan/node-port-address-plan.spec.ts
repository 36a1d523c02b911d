import { planNodePortAddresses, type NodePortAddressPlan, type NodePortAddressSelection } from './node-port-address-plan.js';
import type { IPFamily } from '../model/protocol.js';

const ALL: NodePortAddressSelection = { all: true };
const ips = (...list: string[]): NodePortAddressSelection => ({ all: false, ips: list });

const cases: Array<[string, IPFamily, NodePortAddressSelection, boolean, NodePortAddressPlan]> = [
  [
    'IPv4, all addresses, localhost node ports on: loopback served',
    'IPv4',
    ALL,
    true,
    { allLocalAddresses: true, excludeLoopback: false, addresses: [], localhostNodePorts: true },
  ],
  [
    'IPv4, all addresses, localhost node ports off: loopback excluded',
    'IPv4',
    ALL,
    false,
    { allLocalAddresses: true, excludeLoopback: true, addresses: [], localhostNodePorts: false },
  ],
  [
    'IPv6 never serves localhost node ports',
    'IPv6',
    ALL,
    true,
    { allLocalAddresses: true, excludeLoopback: true, addresses: [], localhostNodePorts: false },
  ],
  [
    'a list with IPv4 loopback keeps localhost node ports and the loopback address',
    'IPv4',
    ips('127.0.0.1', '192.168.0.2'),
    true,
    { allLocalAddresses: false, excludeLoopback: false, addresses: ['127.0.0.1', '192.168.0.2'], localhostNodePorts: true },
  ],
  [
    'a list without IPv4 loopback turns localhost node ports off',
    'IPv4',
    ips('192.168.0.2'),
    true,
    { allLocalAddresses: false, excludeLoopback: false, addresses: ['192.168.0.2'], localhostNodePorts: false },
  ],
  [
    'with localhost node ports off a loopback address in the list is skipped',
    'IPv4',
    ips('127.0.0.1', '192.168.0.2'),
    false,
    { allLocalAddresses: false, excludeLoopback: false, addresses: ['192.168.0.2'], localhostNodePorts: false },
  ],
  [
    'addresses of the other family are left out, IPv6 loopback always',
    'IPv6',
    ips('192.168.0.2', '::1', 'fd00::2'),
    true,
    { allLocalAddresses: false, excludeLoopback: false, addresses: ['fd00::2'], localhostNodePorts: false },
  ],
];

describe('planNodePortAddresses', () => {
  it.each(cases)('%s', (_name, family, selection, flag, expected) => {
    expect(planNodePortAddresses(family, selection, flag)).toEqual(expected);
  });
});
