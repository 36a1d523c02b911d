import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcSysctl, sysctlPath } from './proc-sysctl.js';

describe('sysctlPath', () => {
  it('accepts dotted and slashed names; slashed names keep dots (VLAN interfaces)', () => {
    expect(sysctlPath('net.ipv4.ip_forward')).toBe('net/ipv4/ip_forward');
    expect(sysctlPath('net/ipv4/ip_forward')).toBe('net/ipv4/ip_forward');
    expect(sysctlPath('net/ipv4/conf/eth0.100/route_localnet')).toBe('net/ipv4/conf/eth0.100/route_localnet');
  });

  it('refuses names that would escape the root', () => {
    expect(() => sysctlPath('net/../../etc/passwd')).toThrow('invalid sysctl name');
    expect(() => sysctlPath('')).toThrow('invalid sysctl name');
  });
});

describe('ProcSysctl on a fixture root', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kp-sysctl-'));
    await mkdir(join(root, 'net/ipv4/conf/all'), { recursive: true });
    await writeFile(join(root, 'net/ipv4/ip_forward'), '0\n');
    await writeFile(join(root, 'net/ipv4/conf/all/route_localnet'), '0\n');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('reads trimmed values and undefined for missing ones', async () => {
    const s = new ProcSysctl(root);
    expect(await s.get('net.ipv4.ip_forward')).toBe('0');
    expect(await s.get('net/ipv4/no_such')).toBeUndefined();
  });

  it('writes values', async () => {
    const s = new ProcSysctl(root);
    await s.set('net/ipv4/conf/all/route_localnet', '1');
    expect(await readFile(join(root, 'net/ipv4/conf/all/route_localnet'), 'utf8')).toBe('1');
    expect(await s.get('net.ipv4.conf.all.route_localnet')).toBe('1');
  });

  it('does not create sysctls that do not exist', async () => {
    const s = new ProcSysctl(root);
    await expect(s.set('net/ipv4/invented', '1')).rejects.toThrow('cannot set sysctl net/ipv4/invented=1: ENOENT');
  });
});

describe('ProcSysctl on this machine', () => {
  it('reads a real sysctl', async () => {
    expect(await new ProcSysctl().get('kernel/osrelease')).toMatch(/^\d+\.\d+/);
  });
});
