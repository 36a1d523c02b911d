import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { diffDesiredStates } from '../batch/diff-batches.js';
import { renderIpsetRestore, renderIpvsadmRestore } from '../batch/render-batches.js';
import { TestCluster, makeService } from '../testing/ipvs-fixtures.js';
import { IpvsKernelCommandError } from './kernel-command-error.js';
import { MemoryIpvsKernel } from './memory-ipvs-kernel.js';

/** `later`: web loses an endpoint, the UDP port goes, the scheduler becomes mh (as the VM round trip). */
function cluster(later: boolean): TestCluster {
  const c = new TestCluster('IPv4');
  c.service(makeService('ns1', 'web', (s) => {
    s.spec = { type: 'NodePort', clusterIP: '10.96.0.10', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }, ...(later ? [] : [{ name: 'dns', port: 53, protocol: 'UDP' }])] };
  }));
  c.endpoints('ns1/web:http', [{ ip: '10.244.1.5', port: 8080 }, ...(later ? [] : [{ ip: '10.244.2.6', port: 8080 }])]);
  if (!later) c.endpoints('ns1/web:dns', [{ ip: '10.244.1.7', port: 5353 }]);
  return c;
}

function v6Cluster(): TestCluster {
  const c = new TestCluster('IPv6');
  c.service(makeService('ns1', 'v6', (s) => {
    s.spec = { type: 'ClusterIP', clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a'], ipFamilies: ['IPv6'], ports: [{ name: 'h', port: 443, protocol: 'TCP' }] };
  }));
  c.endpoints('ns1/v6:h', [{ ip: 'fd00:10:244::5', port: 8443 }]);
  return c;
}

async function rejection(p: Promise<unknown>): Promise<IpvsKernelCommandError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof IpvsKernelCommandError)) throw new Error(`expected an IpvsKernelCommandError, got ${String(e)}`);
  return e;
}

describe('MemoryIpvsKernel', () => {
  it('applies the full restore text and a diff batch, and reads back exactly the desired state (as the real kernel did)', async () => {
    const before = cluster(false).state({ scheduler: 'rr' });
    const after = cluster(true).state({ scheduler: 'mh' });
    const k = new MemoryIpvsKernel();
    await k.applyIpvsadm(renderIpvsadmRestore(before));
    await k.applyIpset(renderIpsetRestore(before));
    expect(await k.readVirtualServers('IPv4')).toEqual(before.virtualServers);
    const diff = diffDesiredStates(before, after);
    expect(diff.ipvsadm).not.toBe('');
    await k.applyIpvsadm(diff.ipvsadm);
    await k.applyIpset(diff.ipset);
    expect(await k.readVirtualServers('IPv4')).toEqual(after.virtualServers);
    const sets = await k.readIpsets();
    for (const s of after.ipsets) expect([...(sets.get(s.set.name) ?? [])].sort()).toEqual(s.entries);
  });

  it('keeps the families apart: each family reads only its virtual servers and addresses', async () => {
    const v4 = cluster(true).state();
    const v6 = v6Cluster().state();
    const k = new MemoryIpvsKernel();
    await k.applyIpvsadm(renderIpvsadmRestore(v4) + renderIpvsadmRestore(v6));
    await k.applyLinkChanges({ createLink: true, add: [...v4.bindAddresses, ...v6.bindAddresses], remove: [] });
    expect(await k.readVirtualServers('IPv6')).toEqual(v6.virtualServers);
    expect(await k.readVirtualServers('IPv4')).toEqual(v4.virtualServers);
    expect(await k.readBoundAddresses('IPv4')).toEqual(v4.bindAddresses);
    expect(await k.readBoundAddresses('IPv6')).toEqual(['fd00:10:96::a']);
  });

  it('records every call with its text; empty batches and reads are not writes', async () => {
    const k = new MemoryIpvsKernel();
    await k.readVirtualServers('IPv4');
    await k.readIpsets();
    await k.readBoundAddresses('IPv6');
    await k.readConnections();
    await k.applyIpvsadm('');
    await k.applyIpset('');
    await k.applyLinkChanges({ createLink: false, add: [], remove: [] });
    expect(k.calls.map((c) => c.method)).toEqual(['readVirtualServers', 'readIpsets', 'readBoundAddresses', 'readConnections', 'applyIpvsadm', 'applyIpset', 'applyLinkChanges']);
    expect(k.calls[0].family).toBe('IPv4');
    expect(k.writes()).toEqual([]);
    await k.applyLinkChanges({ createLink: true, add: ['10.96.0.1'], remove: [] });
    expect(k.writes()).toEqual([{ method: 'applyLinkChanges', text: 'link add kube-ipvs0 type dummy\naddress add 10.96.0.1/32 dev kube-ipvs0\n' }]);
    expect(k.callsOf('applyLinkChanges')).toHaveLength(2);
    k.clearCalls();
    expect(k.calls).toEqual([]);
  });

  it('fails an ipvsadm batch with every message ipvsadm would print, after applying the lines that worked', async () => {
    const k = new MemoryIpvsKernel();
    await k.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\n');
    const e = await rejection(k.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\n-A -t 10.96.0.11:80 -s rr\n-d -t 10.96.0.10:80 -r 10.1.1.1:80\n'));
    expect(e.message).toBe('ipvsadm --restore failed (exit 0): Service already exists\nNo such destination');
    expect((await k.readVirtualServers('IPv4')).map((v) => v.key)).toEqual(['10.96.0.10:80/TCP', '10.96.0.11:80/TCP']);
  });

  it('fails an ipset script at its first failing line with the line number', async () => {
    const k = new MemoryIpvsKernel();
    const e = await rejection(k.applyIpset('create A hash:ip family inet hashsize 1024 maxelem 65536\nadd B 10.0.0.1\n'));
    expect(e.message).toBe('ipset restore -exist failed (exit 1): ipset v7.17: Error in line 2: The set with the given name does not exist');
    expect(await k.readIpsets()).toEqual(new Map([['A', []]]));
  });

  it('runs the link batch as ip does: kube-ipvs0 first, then binds and unbinds; a failing line stops the rest', async () => {
    const k = new MemoryIpvsKernel();
    expect(await k.readBoundAddresses('IPv4')).toBeNull();
    expect((await rejection(k.applyLinkChanges({ createLink: false, add: ['10.96.0.1'], remove: [] }))).message).toMatch(/Cannot find device "kube-ipvs0"\nCommand failed -:1/);
    await k.applyLinkChanges({ createLink: true, add: ['10.96.0.10', '10.96.0.53', 'fd00::53'], remove: [] });
    await k.applyLinkChanges({ createLink: false, add: [], remove: ['10.96.0.53', 'fd00::53'] });
    expect(await k.readBoundAddresses('IPv4')).toEqual(['10.96.0.10']);
    expect(await k.readBoundAddresses('IPv6')).toEqual([]);
    const e = await rejection(k.applyLinkChanges({ createLink: false, add: ['10.96.0.54', '10.96.0.10', '10.96.0.55'], remove: [] }));
    expect(e.message).toMatch(/RTNETLINK answers: File exists\nCommand failed -:2/);
    expect(await k.readBoundAddresses('IPv4')).toEqual(['10.96.0.10', '10.96.0.54']);
    expect((await rejection(k.applyLinkChanges({ createLink: false, add: [], remove: ['10.96.0.99'] }))).message).toMatch(/Cannot assign requested address/);
  });

  it('binds as the kernel does: ::, ::1 and IPv6 multicast refused with its words, 0.0.0.0 taken but never listed', async () => {
    const k = new MemoryIpvsKernel();
    await k.applyLinkChanges({ createLink: true, add: ['0.0.0.0', '127.0.0.5', 'fe80::5'], remove: [] });
    expect(await k.readBoundAddresses('IPv4')).toEqual(['127.0.0.5']);
    for (const address of ['::', '::1', 'ff02::5']) {
      const e = await rejection(k.applyLinkChanges({ createLink: false, add: ['fd00::1', address], remove: [] }));
      expect(e.message).toContain('RTNETLINK answers: Cannot assign requested address');
      expect(e.message).toMatch(/Command failed -:2/);
      await k.applyLinkChanges({ createLink: false, add: [], remove: ['fd00::1'] });
    }
    expect(await k.readBoundAddresses('IPv6')).toEqual(['fe80::5']);
  });

  it('refuses real servers and set entries as the kernel does: not-unicast destinations, all-zero hash:ip(,port) elements', async () => {
    const k = new MemoryIpvsKernel();
    const e = await rejection(k.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 224.0.0.5:80 -m -w 1\n-a -t 10.96.0.10:80 -r 127.0.0.1:80 -m -w 1\n-A -t 0.0.0.0:80 -s rr\n'));
    expect(e.message).toBe('ipvsadm --restore failed (exit 0): Invalid operation.  Possibly wrong module version, address not unicast, ...');
    expect((await k.readVirtualServers('IPv4')).map((v) => [v.key, v.realServers.map((r) => r.key)])).toEqual([
      ['0.0.0.0:80/TCP', []],
      ['10.96.0.10:80/TCP', ['127.0.0.1:80']],
    ]);
    const create = 'create S hash:ip,port family inet hashsize 1024 maxelem 65536\n';
    expect((await rejection(k.applyIpset(`${create}add S 0.0.0.0,tcp:80\n`))).message).toMatch(/Error in line 2: Kernel error received: Invalid argument/);
    await k.applyIpset('create L hash:ip,port,ip family inet hashsize 1024 maxelem 65536\nadd L 0.0.0.0,tcp:80,0.0.0.0\n');
    expect((await rejection(k.applyIpset('create I hash:ip family inet hashsize 1024 maxelem 65536\nadd I 0.0.0.0\n'))).message).toMatch(/Null-valued element/);
  });

  it('both families creating kube-ipvs0 share the one link, as on a node: the later `link add` is dropped and its binds still run', async () => {
    const k = new MemoryIpvsKernel();
    // A dual-stack dry run: each family's proxier read the link back as missing before either wrote.
    expect(await k.readBoundAddresses('IPv4')).toBeNull();
    expect(await k.readBoundAddresses('IPv6')).toBeNull();
    await k.applyLinkChanges({ createLink: true, add: ['10.96.0.10'], remove: [] });
    await k.applyLinkChanges({ createLink: true, add: ['fd00::10'], remove: [] });
    expect(await k.readBoundAddresses('IPv4')).toEqual(['10.96.0.10']);
    expect(await k.readBoundAddresses('IPv6')).toEqual(['fd00::10']);
    // Two processes for the second family, as the host runs them: the batch that met EEXIST, then its binds.
    expect(k.callsOf('applyLinkChanges').map((c) => c.text)).toEqual([
      'link add kube-ipvs0 type dummy\naddress add 10.96.0.10/32 dev kube-ipvs0\n',
      'link add kube-ipvs0 type dummy\naddress add fd00::10/128 dev kube-ipvs0\n',
      'address add fd00::10/128 dev kube-ipvs0\n',
    ]);
    // Only the link line is forgiven: a bind that exists still fails, on its own line number.
    const e = await rejection(k.applyLinkChanges({ createLink: true, add: ['10.96.0.10'], remove: [] }));
    expect(e.message).toMatch(/RTNETLINK answers: File exists\nCommand failed -:1/);
  });

  it('shows zero connections for every real server until setConnections says otherwise; counts go with the server', async () => {
    const k = new MemoryIpvsKernel();
    await k.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 10.1.1.1:80 -m -w 1\n-a -t 10.96.0.10:80 -r 10.1.1.2:80 -m -w 1\n-A -u [fd00::a]:53 -s rr\n');
    k.setConnections('10.96.0.10:80/TCP', '10.1.1.1:80', 2, 5);
    const counts = await k.readConnections();
    expect(counts.get('10.96.0.10:80/TCP')).toEqual(new Map([['10.1.1.1:80', { active: 2, inactive: 5 }], ['10.1.1.2:80', { active: 0, inactive: 0 }]]));
    expect(counts.get('[fd00::a]:53/UDP')).toEqual(new Map());
    await k.applyIpvsadm('-d -t 10.96.0.10:80 -r 10.1.1.1:80\n-a -t 10.96.0.10:80 -r 10.1.1.1:80 -m -w 1\n');
    expect((await k.readConnections()).get('10.96.0.10:80/TCP')?.get('10.1.1.1:80')).toEqual({ active: 0, inactive: 0 });
    expect(() => k.setConnections('10.96.0.10:80/TCP', '10.9.9.9:80', 1, 0)).toThrow(/no real server 10\.9\.9\.9:80/);
  });

  it('refuses unsafe text before applying any of it', async () => {
    const k = new MemoryIpvsKernel();
    await expect(k.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\r\n')).rejects.toThrow(UnsafeRestoreTextError);
    await expect(k.applyIpset('create A hash:ip family inet hashsize 1024 maxelem 65536')).rejects.toThrow(UnsafeRestoreTextError);
    expect(await k.readVirtualServers('IPv4')).toEqual([]);
    expect((await k.readIpsets()).size).toBe(0);
  });

  it('dumps the dry-run section bodies of one family: servers in --save -n notation, catalogue sets, bound addresses', async () => {
    const v4 = cluster(false).state({ scheduler: 'mh' });
    const v6 = v6Cluster().state();
    const k = new MemoryIpvsKernel();
    await k.applyIpvsadm(renderIpvsadmRestore(v4) + renderIpvsadmRestore(v6));
    await k.applyIpset(renderIpsetRestore(v4) + renderIpsetRestore(v6) + 'create NOT-OURS hash:ip family inet hashsize 1024 maxelem 65536\n');
    await k.applyLinkChanges({ createLink: true, add: ['10.96.0.10', 'fd00:10:96::a'], remove: [] });
    const d4 = k.dump('IPv4');
    expect(d4.ipvs).toBe(renderIpvsadmRestore(v4));
    expect(d4.ipvs.split('\n').slice(0, 5)).toEqual([
      '-A -u 10.96.0.10:53 -s mh -p 10800 -b mh-port',
      '-a -u 10.96.0.10:53 -r 10.244.1.7:5353 -m -w 1',
      '-A -t 10.96.0.10:80 -s mh -p 10800 -b mh-port',
      '-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1',
      '-a -t 10.96.0.10:80 -r 10.244.2.6:8080 -m -w 1',
    ]);
    expect(d4.ipset).toBe(renderIpsetRestore(v4));
    expect(d4.ipset).not.toContain('NOT-OURS');
    expect(d4.kubeIpvs0).toBe('10.96.0.10/32\n');
    const d6 = k.dump('IPv6');
    expect(d6.ipvs).toBe('-A -t [fd00:10:96::a]:443 -s rr\n-a -t [fd00:10:96::a]:443 -r [fd00:10:244::5]:8443 -m -w 1\n');
    expect(d6.ipset.split('\n')[0]).toBe('create KUBE-6-LOOP-BACK hash:ip,port,ip family inet6 hashsize 1024 maxelem 65536');
    expect(d6.kubeIpvs0).toBe('fd00:10:96::a/128\n');
    expect(k.calls.filter((c) => c.method.startsWith('read'))).toEqual([]);
  });

  it('dumps nothing for an empty kernel', () => {
    expect(new MemoryIpvsKernel().dump('IPv4')).toEqual({ ipvs: '', ipset: '', kubeIpvs0: '' });
  });

  it('dumps servers someone else made with their own forwarding method and options', async () => {
    const k = new MemoryIpvsKernel();
    await k.applyIpvsadm('-A -t 10.96.0.99:8080 -s wrr -p 60 -M 255.255.255.0\n-a -t 10.96.0.99:8080 -r 10.244.3.1:8080 -g -w 5\n-a -t 10.96.0.99:8080 -r 10.244.3.2:8080 -i -w 2 --tun-type ipip\n');
    expect(k.dump('IPv4').ipvs).toBe('-A -t 10.96.0.99:8080 -s wrr -p 60 -M 255.255.255.0\n-a -t 10.96.0.99:8080 -r 10.244.3.1:8080 -g -w 5\n-a -t 10.96.0.99:8080 -r 10.244.3.2:8080 -i -w 2 --tun-type ipip\n');
  });
});
