import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * Upstream kube-proxy exits when its --config file changes or disappears, so that the DaemonSet
 * restarts it with the new configuration (a ConfigMap update). This watches the file (inotify plus a
 * slow poll for ConfigMap symlink swaps) and calls `onChange(reason)` once when the content differs
 * from what the proxy started with or the file is gone. Touching the file without changing it is
 * not a change.
 */
export class ConfigFileWatch {
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private fired = false;
  private checking = false;

  constructor(
    private readonly path: string,
    private readonly original: string,
    private readonly onChange: (reason: string) => void,
    private readonly pollIntervalMs = 2000,
  ) {}

  start(): void {
    try {
      this.watcher = watch(this.path, () => void this.check());
      this.watcher.on('error', () => void this.check());
    } catch {
      // Missing already: the poll reports it.
    }
    this.poll = setInterval(() => void this.check(), this.pollIntervalMs);
    this.poll.unref();
  }

  stop(): void {
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
  }

  async check(): Promise<void> {
    if (this.fired || this.checking) return;
    this.checking = true;
    try {
      let reason: string | undefined;
      try {
        const now = await readFile(this.path, 'utf8');
        if (now !== this.original) reason = `config file ${this.path} changed`;
      } catch (err) {
        reason = `config file ${this.path} is gone or unreadable: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      }
      if (reason && !this.fired) {
        this.fired = true;
        this.stop();
        this.onChange(reason);
      }
    } finally {
      this.checking = false;
    }
  }
}
