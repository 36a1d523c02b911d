import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sysctl } from './sysctl.js';

/**
 * Names as sysctl(8) and upstream write them: `net/ipv4/ip_forward` (slashes, as upstream's sysctl
 * package) or `net.ipv4.ip_forward` (dots). A name with a slash is taken as a path as-is, because
 * interface names may contain dots (`net/ipv4/conf/eth0.100/route_localnet`).
 */
export function sysctlPath(name: string): string {
  const rel = name.includes('/') ? name : name.replaceAll('.', '/');
  const parts = rel.split('/').filter((p) => p !== '');
  if (parts.length === 0 || parts.some((p) => p === '..' || p === '.')) {
    throw new Error(`invalid sysctl name ${JSON.stringify(name)}`);
  }
  return parts.join('/');
}

/** Sysctl on /proc/sys (or another root, for tests). */
export class ProcSysctl implements Sysctl {
  constructor(private readonly root = '/proc/sys') {}

  async get(name: string): Promise<string | undefined> {
    try {
      return (await readFile(join(this.root, sysctlPath(name)), 'utf8')).trim();
    } catch {
      return undefined;
    }
  }

  async set(name: string, value: string): Promise<void> {
    const path = join(this.root, sysctlPath(name));
    try {
      // Without O_CREAT, a missing sysctl is an error rather than a new file; O_TRUNC is what
      // `echo 1 > /proc/sys/…` does, and keeps fixture files exact.
      const file = await open(path, constants.O_WRONLY | constants.O_TRUNC);
      try {
        await file.writeFile(value);
      } finally {
        await file.close();
      }
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new Error(`cannot set sysctl ${name}=${value}: ${err.code ?? ''} ${err.message}`.replace(/\s+/g, ' ').trim(), { cause: e });
    }
  }
}
