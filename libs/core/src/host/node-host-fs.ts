import { access, readFile } from 'node:fs/promises';
import { release } from 'node:os';
import { join } from 'node:path';
import type { HostFs } from './host-fs.js';

/**
 * HostFs on the real filesystem. `root` prefixes every path, for a host filesystem mounted elsewhere
 * (e.g. /host in a container) or a fixture tree in tests.
 */
export class NodeHostFs implements HostFs {
  constructor(
    private readonly root = '/',
    private readonly releaseOf: () => string = release,
  ) {}

  async exists(path: string): Promise<boolean> {
    try {
      await access(join(this.root, path));
      return true;
    } catch {
      return false;
    }
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    try {
      return await readFile(join(this.root, path));
    } catch {
      return undefined;
    }
  }

  kernelRelease(): string {
    return this.releaseOf();
  }
}
