/**
 * `bin/kube-proxy --dry-run` against a TestApiServer, as a child process the tests can wait on:
 * stdout is parsed incrementally into sync blocks (see sync-output.ts), stderr (the log) is kept for
 * failure messages. Every wait is bounded. The proxy runs under the netns harness's watchdog
 * (libs/testing/netns/src/watchdog.mjs, plain Node, no root involved), so it cannot outlive the test process
 * even if Jest is killed; stopAllProxies() ends whatever a test left running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { scriptPath } from '@kube-proxy/testing-netns';
import { NODE_NAME } from './objects.js';
import { SyncOutputParser, tableLines, type SyncBlock } from './sync-output.js';

/** `bin/kube-proxy`; `KUBE_PROXY_E2E_BIN` overrides it, as for the other e2e suites. */
export const KUBE_PROXY_BIN = process.env['KUBE_PROXY_E2E_BIN'] || fileURLToPath(new URL('../../../../bin/kube-proxy', import.meta.url));
/** The build bin/kube-proxy runs. */
export const PROXY_MAIN_JS = fileURLToPath(new URL('../../../proxy/dist/main.js', import.meta.url));

export const MIN_SYNC_PERIOD_MS = 0;
/** The command line of the brief, minus --master; `extra` is appended. */
export function dryRunArgs(master: string, extra: readonly string[] = []): string[] {
  return [
    `--master=${master}`,
    `--hostname-override=${NODE_NAME}`,
    '--proxy-mode=iptables',
    '--dry-run',
    `--iptables-min-sync-period=${MIN_SYNC_PERIOD_MS / 1000}s`,
    '--iptables-sync-period=2s',
    '--cluster-cidr=10.244.0.0/16',
    '-v=2',
    ...extra,
  ];
}

/** Fails with a hint when there is no build: bin/kube-proxy would otherwise build for ~30 s inside a test. */
export function assertBuilt(): void {
  if (!process.env['KUBE_PROXY_E2E_BIN'] && !existsSync(PROXY_MAIN_JS)) {
    throw new Error(`${PROXY_MAIN_JS} does not exist: run \`npx nx build proxy\` first (the e2e target does)`);
  }
}

const LOG_CAP = 2_000_000;
/** Bounds the watchdog's own lifetime: nothing in this suite runs a proxy for long. */
const WATCHDOG_LIFETIME_S = 300;

const running = new Set<DryRunProxy>();

export type Exit = { readonly code: number | null; readonly signal: NodeJS.Signals | null };

export class DryRunProxy {
  /** Every complete sync block, oldest first. */
  readonly blocks: SyncBlock[] = [];
  private stderrText = '';
  private exit: Exit | undefined;
  private readonly exited: Promise<Exit>;
  private readonly listeners = new Set<() => void>();
  private readonly parser: SyncOutputParser;

  private constructor(
    readonly name: string,
    readonly args: readonly string[],
    private readonly child: ChildProcess,
  ) {
    this.parser = new SyncOutputParser((b) => {
      this.blocks.push(b);
      this.notify();
    });
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => this.parser.feed(d));
    child.stderr?.on('data', (d: string) => {
      if (this.stderrText.length < LOG_CAP) this.stderrText += d;
    });
    // The watchdog ends the proxy when its stdin closes; an EPIPE there must not crash the test.
    child.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        running.delete(this);
        this.notify();
        resolve(this.exit);
      });
      child.once('error', (err) => {
        this.stderrText += `\n(spawn error: ${err.message})`;
        this.exit ??= { code: null, signal: null };
        running.delete(this);
        this.notify();
        resolve(this.exit);
      });
    });
  }

  /** Starts `bin/kube-proxy <args>`; `name` labels failure messages. */
  static start(name: string, args: readonly string[]): DryRunProxy {
    assertBuilt();
    const child = spawn(process.execPath, [scriptPath('watchdog.mjs'), String(WATCHDOG_LIFETIME_S), KUBE_PROXY_BIN, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // Never let bin/kube-proxy start an nx build (it would if dist were missing).
      env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' },
    });
    const p = new DryRunProxy(name, args, child);
    running.add(p);
    return p;
  }

  latest(): SyncBlock | undefined {
    return this.blocks[this.blocks.length - 1];
  }

  alive(): boolean {
    return this.exit === undefined;
  }

  exitStatus(): Exit | undefined {
    return this.exit;
  }

  stderr(): string {
    return this.stderrText;
  }

  /** Anything on stdout that was not part of a sync block (must stay empty: stdout is for --dry-run only). */
  strayStdout(): readonly string[] {
    return this.parser.stray;
  }

  /**
   * Resolves with the first complete sync block (the latest state at its arrival) that satisfies
   * `pred`, checking the current latest one first. Rejects after `timeoutMs`, or at once when the
   * proxy exits, with the latest state and the log tail in the message.
   */
  waitForState(pred: (b: SyncBlock) => boolean, timeoutMs: number, what = 'a matching state'): Promise<SyncBlock> {
    return new Promise<SyncBlock>((resolve, reject) => {
      const initial = this.latest();
      if (initial && pred(initial)) return resolve(initial);
      // Blocks arriving from now on: each is the latest state when it arrives, so each is checked.
      let next = this.blocks.length;
      const listener = (): void => {
        for (; next < this.blocks.length; next++) {
          const b = this.blocks[next]!;
          if (pred(b)) {
            done();
            return resolve(b);
          }
        }
        if (this.exit) {
          done();
          reject(new Error(`${this.name}: proxy exited (${describeExit(this.exit)}) before ${what}\n${this.context()}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name}: no sync produced ${what} within ${timeoutMs} ms\n${this.context()}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
      listener(); // already exited?
    });
  }

  /** The first sync (bounded). */
  firstSync(timeoutMs = 15_000): Promise<SyncBlock> {
    return this.waitForState(() => true, timeoutMs, 'its first sync');
  }

  /** Waits for the process to exit on its own (e.g. --once), bounded; kills it when the bound is hit. */
  async waitForExit(timeoutMs: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.exited, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
    clearTimeout(timer);
    if (r) return r;
    await this.stop();
    throw new Error(`${this.name}: did not exit within ${timeoutMs} ms\n${this.context()}`);
  }

  /** SIGTERM (the watchdog forwards it to the proxy's process group), SIGKILL if that does not end it. */
  async stop(graceMs = 8000): Promise<Exit> {
    if (this.exit) return this.exit;
    const signal = (sig: NodeJS.Signals): void => {
      try {
        this.child.kill(sig);
      } catch {
        /* already gone */
      }
    };
    signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.exited, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), graceMs)))]);
    clearTimeout(timer);
    if (r) return r;
    signal('SIGKILL'); // the watchdog's group then goes with its stdin closing
    this.child.stdin?.destroy();
    return Promise.race([this.exited, new Promise<Exit>((resolve) => setTimeout(() => resolve({ code: null, signal: 'SIGKILL' }), 3000))]);
  }

  /** The latest state (nat table) and the log tail, for failure messages. */
  context(logLines = 40): string {
    const b = this.latest();
    const state = b ? `latest sync: #${b.seq} ${b.kind} (${this.blocks.length} blocks)\n*nat\n${tableLines(b, 'nat').join('\n')}` : 'no sync block yet';
    const tail = this.stderrText.split('\n').slice(-logLines).join('\n');
    return `--- ${state}\n--- proxy log tail (${this.args.join(' ')}):\n${tail}`;
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }
}

function describeExit(e: Exit): string {
  return e.signal ? `signal ${e.signal}` : `code ${e.code}`;
}

/** Runs `--once` to completion (bounded) and returns its single sync block. */
export async function runOnce(name: string, args: readonly string[], timeoutMs = 20_000): Promise<{ block: SyncBlock; proxy: DryRunProxy }> {
  const proxy = DryRunProxy.start(name, [...args, '--once']);
  const exit = await proxy.waitForExit(timeoutMs);
  if (exit.code !== 0) throw new Error(`${name}: --once exited with ${describeExit(exit)}\n${proxy.context()}`);
  const block = proxy.latest();
  if (!block) throw new Error(`${name}: --once printed no sync block\n${proxy.context()}`);
  return { block, proxy };
}

/** Stops every proxy still running (afterEach/afterAll). */
export async function stopAllProxies(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}
