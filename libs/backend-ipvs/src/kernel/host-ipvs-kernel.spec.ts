import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeCommandExecutor } from '@kube-proxy/core/testing';
import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { HostIpvsKernel } from './host-ipvs-kernel.js';
import { IpvsKernelCommandError } from './kernel-command-error.js';

const SAVE = '-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1\n-A -t [fd00::1]:80 -s rr\n';
const IPSET_SAVE = 'create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x97693cde\nadd KUBE-IPVS-IPS 10.96.0.10\n';

function setup(): { exec: FakeCommandExecutor; kernel: HostIpvsKernel } {
  const exec = new FakeCommandExecutor();
  return { exec, kernel: new HostIpvsKernel(exec, { procNetIpVsPath: '/nonexistent/ip_vs' }) };
}

describe('HostIpvsKernel', () => {
  it('reads virtual servers with one `ipvsadm --save -n` and keeps only the asked family', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ipvsadm', args: ['--save', '-n'] }, { stdout: SAVE });
    expect((await kernel.readVirtualServers('IPv4')).map((v) => v.key)).toEqual(['10.96.0.10:80/TCP']);
    expect((await kernel.readVirtualServers('IPv6')).map((v) => v.key)).toEqual(['[fd00::1]:80/TCP']);
    expect(exec.commandLines()).toEqual(['ipvsadm --save -n', 'ipvsadm --save -n']);
  });

  it('hands an ipvsadm batch to one `ipvsadm --restore` on stdin, argument array only', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ipvsadm' }, {});
    await kernel.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\n');
    expect(exec.calls).toEqual([{ command: 'ipvsadm', args: ['--restore'], options: expect.objectContaining({ input: '-A -t 10.96.0.10:80 -s rr\n' }) }]);
  });

  it('fails an ipvsadm batch whose lines ipvsadm refused although it exited 0, with its words', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ipvsadm' }, { exitCode: 0, stderr: 'Service already exists\nNo such destination\n' });
    const error = await kernel.applyIpvsadm('-A -t 10.96.0.10:80 -s rr\n-d -t 10.96.0.10:80 -r 10.1.1.1:80\n').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IpvsKernelCommandError);
    expect((error as Error).message).toBe('ipvsadm --restore failed (exit 0): Service already exists\nNo such destination');
  });

  it('fails with the exit code and stderr when a tool exits non-zero, and says when it could not start', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ipset' }, { exitCode: 1, stderr: 'ipset v7.17: Error in line 1: The set with the given name does not exist\n' });
    await expect(kernel.applyIpset('add KUBE-X 10.0.0.1\n')).rejects.toThrow('ipset restore -exist failed (exit 1): ipset v7.17: Error in line 1: The set with the given name does not exist');
    await expect(kernel.readVirtualServers('IPv4')).rejects.toThrow('ipvsadm --save -n failed (exit null): spawn ipvsadm ENOENT');
  });

  it('applies ipset scripts with `ipset restore -exist` and reads sets with `ipset save`', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ipset', args: ['save'] }, { stdout: IPSET_SAVE });
    exec.on({ command: 'ipset', args: ['restore', '-exist'] }, {});
    await kernel.applyIpset('create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536\n');
    expect(await kernel.readIpsets()).toEqual(new Map([['KUBE-IPVS-IPS', ['10.96.0.10']]]));
    expect(exec.commandLines()).toEqual(['ipset restore -exist', 'ipset save']);
    expect(exec.calls[0].options.input).toBe('create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536\n');
  });

  it('runs nothing for empty batches', async () => {
    const { exec, kernel } = setup();
    await kernel.applyIpvsadm('');
    await kernel.applyIpset('');
    await kernel.applyLinkChanges({ createLink: false, add: [], remove: [] });
    expect(exec.calls).toEqual([]);
  });

  it('refuses unsafe text before any process sees it', async () => {
    const { exec, kernel } = setup();
    exec.setDefault({});
    await expect(kernel.applyIpvsadm('-A -t 10.96.0.10:80 -s rr')).rejects.toThrow(UnsafeRestoreTextError); // no final newline
    await expect(kernel.applyIpset('add KUBE-IPVS-IPS 10.0.0.1\r\n')).rejects.toThrow(UnsafeRestoreTextError);
    await expect(kernel.applyIpvsadm(`-A -t 10.96.0.10:80 -s rr -p ${'9'.repeat(5000)}\n`)).rejects.toThrow(UnsafeRestoreTextError);
    await expect(kernel.applyLinkChanges({ createLink: false, add: ['10.0.0.1\naddress flush dev eth0'], remove: [] })).rejects.toThrow(UnsafeRestoreTextError);
    expect(exec.calls).toEqual([]);
  });

  it('creates kube-ipvs0 and binds / unbinds addresses in one `ip -batch -`', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ip' }, {});
    await kernel.applyLinkChanges({ createLink: true, add: ['10.96.0.10', 'fd00::a'], remove: ['10.96.0.53'] });
    expect(exec.commandLines()).toEqual(['ip -batch -']);
    expect(exec.calls[0].options.input).toBe(
      'link add kube-ipvs0 type dummy\naddress add 10.96.0.10/32 dev kube-ipvs0\naddress add fd00::a/128 dev kube-ipvs0\naddress del 10.96.0.53/32 dev kube-ipvs0\n',
    );
  });

  it('when the other family created kube-ipvs0 first (EEXIST on line 1), binds the addresses with a second batch', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ip' }, (call) =>
      String(call.options.input).startsWith('link add') ? { exitCode: 1, stderr: 'RTNETLINK answers: File exists\nCommand failed -:1\n' } : {},
    );
    await kernel.applyLinkChanges({ createLink: true, add: ['10.96.0.10'], remove: [] });
    expect(exec.calls.map((c) => c.options.input)).toEqual(['link add kube-ipvs0 type dummy\naddress add 10.96.0.10/32 dev kube-ipvs0\n', 'address add 10.96.0.10/32 dev kube-ipvs0\n']);
  });

  it('reports a failed link batch with the line ip names (ip stops there, without -force)', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ip' }, { exitCode: 1, stderr: 'RTNETLINK answers: File exists\nCommand failed -:1\n' });
    await expect(kernel.applyLinkChanges({ createLink: false, add: ['10.96.0.10'], remove: [] })).rejects.toThrow(/RTNETLINK answers: File exists\nCommand failed -:1/);
    expect(exec.calls[0].args).toEqual(['-batch', '-']);
  });

  it('reads bound addresses with `ip -o -f inet|inet6 addr show dev kube-ipvs0`, null when the link does not exist', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ip', args: ['-o', '-f', 'inet', 'addr', 'show', 'dev', 'kube-ipvs0'] }, {
      stdout: '2: kube-ipvs0    inet 10.96.0.20/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n2: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n',
    });
    exec.on({ command: 'ip', args: ['-o', '-f', 'inet6', 'addr', 'show', 'dev', 'kube-ipvs0'] }, { exitCode: 1, stderr: 'Device "kube-ipvs0" does not exist.\n' });
    expect(await kernel.readBoundAddresses('IPv4')).toEqual(['10.96.0.10', '10.96.0.20']);
    expect(await kernel.readBoundAddresses('IPv6')).toBeNull();
  });

  it('fails an address read for any other ip error', async () => {
    const { exec, kernel } = setup();
    exec.on({ command: 'ip' }, { exitCode: 255, stderr: 'RTNETLINK answers: Operation not permitted\n' });
    await expect(kernel.readBoundAddresses('IPv4')).rejects.toThrow(/exit 255\): RTNETLINK answers: Operation not permitted/);
  });

  describe('connections', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'kp-ipvs-proc-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('reads /proc/net/ip_vs from the injected path without running a process', async () => {
      const path = join(dir, 'ip_vs');
      writeFileSync(path, 'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port Forward Weight ActiveConn InActConn\nTCP  0A60000A:0050 rr  \n  -> 0AF40105:1F90      Masq    1      3          2         \n');
      const exec = new FakeCommandExecutor();
      const counts = await new HostIpvsKernel(exec, { procNetIpVsPath: path }).readConnections();
      expect(counts.get('10.96.0.10:80/TCP')?.get('10.244.1.5:8080')).toEqual({ active: 3, inactive: 2 });
      expect(exec.calls).toEqual([]);
    });

    it('gives an empty map when the file is absent (IPVS not loaded)', async () => {
      const { kernel } = setup();
      expect((await kernel.readConnections()).size).toBe(0);
    });
  });
});
