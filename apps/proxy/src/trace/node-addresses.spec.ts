import type { CommandExecutor } from '@kube-proxy/core';
import { hostAddresses, nodeObjectAddresses, parseIpAddrJson, parseNodeAddresses } from './node-addresses.js';
import { TraceInputError } from './trace-packet.js';

const IP_J_ADDR = JSON.stringify([
  { ifindex: 1, ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8 }, { family: 'inet6', local: '::1', prefixlen: 128 }] },
  { ifindex: 2, ifname: 'eth0', addr_info: [{ family: 'inet', local: '192.168.0.2', prefixlen: 24 }, { family: 'inet6', local: 'FD00:0::2', prefixlen: 64 }] },
  { ifindex: 3, ifname: 'kube-ipvs0', addr_info: [{ family: 'inet', local: '10.96.0.10', prefixlen: 32 }] },
  { ifindex: 4, ifname: 'dummy0' },
]);

describe('node addresses', () => {
  it("the Node object's InternalIP and ExternalIP addresses, canonical; not its hostname", () => {
    const node = {
      status: {
        addresses: [
          { type: 'Hostname', address: 'node-1' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'ExternalIP', address: '2001:DB8::1' },
          { type: 'InternalIP', address: '10.0.0.1' },
        ],
      },
    };
    expect(nodeObjectAddresses(node)).toEqual(['10.0.0.1', '2001:db8::1']);
    expect(nodeObjectAddresses(undefined)).toEqual([]);
  });

  it('--node-address values are checked and canonical', () => {
    expect(parseNodeAddresses(['10.0.0.1', 'fd00:0::1', '10.0.0.1'])).toEqual(['10.0.0.1', 'fd00::1']);
    expect(() => parseNodeAddresses(['10.0.0.300'])).toThrow(new TraceInputError('malformed --node-address "10.0.0.300": want an IP address'));
  });

  it("the host's addresses: every interface's, from ip -j addr show", async () => {
    expect(parseIpAddrJson(IP_J_ADDR)).toEqual(['127.0.0.1', '::1', '192.168.0.2', 'fd00::2', '10.96.0.10']);
    const calls: string[][] = [];
    const executor: CommandExecutor = {
      run: (cmd, args) => {
        calls.push([cmd, ...args]);
        return Promise.resolve({ exitCode: 0, stdout: IP_J_ADDR, stderr: '' });
      },
    };
    expect(await hostAddresses(executor)).toHaveLength(5);
    expect(calls).toEqual([['ip', '-j', 'addr', 'show']]);
  });

  it('a failing ip command or output that is not JSON is a clear error', async () => {
    const failing: CommandExecutor = { run: () => Promise.resolve({ exitCode: null, stdout: '', stderr: '', spawnError: 'spawn ip ENOENT' }) };
    await expect(hostAddresses(failing)).rejects.toThrow("cannot list this host's addresses (ip -j addr show): spawn ip ENOENT");
    expect(() => parseIpAddrJson('1: lo: <LOOPBACK>')).toThrow('cannot read the output of ip -j addr show (not JSON)');
  });
});
