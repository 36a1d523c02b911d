import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningProxy } from './proxy.js';

export interface CheckRunnerOptions {
  /** Where failure artifacts go (the suite's temp dir, known once setup ran). */
  readonly dir: () => string;
  /** Rules dump, logs, …: attached to every failure. */
  readonly diagnostics: () => Promise<string>;
  /** The proxy under test, if started: a check fails early when it has exited. */
  readonly proxy: () => RunningProxy | undefined;
}

/**
 * The bookkeeping every real-kernel suite needs around its checks: one shared setup (beforeAll) whose
 * failure is reported in full once and briefly after that, per-check timings for the summary, and
 * on failure the diagnostics written next to the other artifacts (kept for inspection).
 */
export class CheckRunner {
  readonly timings: Record<string, number | string> = {};
  failures = 0;
  private setupError: Error | undefined;
  private setupErrorReported = false;

  constructor(private readonly opts: CheckRunnerOptions) {}

  /** Runs the suite's setup; a failure is remembered and reported by the first check. */
  async setup(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.failures++;
      this.setupError = e as Error;
      this.setupError.message += `\n${await this.opts.diagnostics()}`;
    }
  }

  async check(name: string, fn: () => Promise<void>): Promise<void> {
    if (this.setupError) {
      const first = !this.setupErrorReported;
      this.setupErrorReported = true;
      if (first) throw this.setupError;
      throw new Error(`setup failed: ${this.setupError.message.split('\n')[0]}`);
    }
    const started = Date.now();
    try {
      const proxy = this.opts.proxy();
      if (proxy?.exited()) throw new Error(`the proxy exited (code ${proxy.exitCode()}) before this check`);
      await fn();
      this.timings[name] = Date.now() - started;
    } catch (e) {
      this.failures++;
      this.timings[name] = `FAIL after ${Date.now() - started} ms`;
      const diag = await this.opts.diagnostics();
      const file = join(this.opts.dir(), `failure-${name.replace(/[^a-z0-9]+/gi, '-')}.txt`);
      writeFileSync(file, `${(e as Error).stack ?? String(e)}\n\n${diag}`);
      (e as Error).message += `\n(diagnostics: ${file})\n${diag.slice(0, 12_000)}`;
      throw e;
    }
  }

  /** The timings summary printed after the suite. */
  summary(title: string, extra = ''): string {
    return (
      `${title}:\n` +
      Object.entries(this.timings)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n') +
      extra +
      (this.failures > 0 ? `\n  artifacts kept in ${this.opts.dir()}` : '')
    );
  }
}
