import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cleanupPrefix, cleanupStaleRuns, idle, run, runPrefix, scriptPath } from '@kube-proxy/testing-netns';

/**
 * Process and namespace plumbing of the userspace-proxy benchmark: one network namespace of its own
 * (`<tag><pid>-node`, so the netns harness' stale-run cleanup recognises leftovers of killed runs),
 * children started in it with argument arrays (`ip netns exec NS cmd args`, never a shell), each one
 * tracked and ended by pid on teardown, on SIGINT/SIGTERM and (synchronously) on exit.
 */

export type BenchScript = 'userspace-echo-server.mjs' | 'userspace-loadgen.mjs' | 'userspace-standin-proxy.mjs';

/** The plain-Node scripts beside this file are not compiled: from `dist/userspace` fall back to `src/userspace`. */
export function benchScript(name: BenchScript): string {
  const here = fileURLToPath(new URL(`./${name}`, import.meta.url));
  if (existsSync(here)) return here;
  const fromDist = fileURLToPath(new URL(`../../src/userspace/${name}`, import.meta.url));
  if (existsSync(fromDist)) return fromDist;
  throw new Error(`cannot find ${name} next to ${fileURLToPath(import.meta.url)}`);
}

const LOG_CAP = 256 * 1024;

/** A child started in the namespace, with its output collected (capped) and its stdout split into lines. */
export class NsChild {
  private out = '';
  private err = '';
  private partial = '';
  private readonly waiters: { tag: string; resolve: (json: unknown) => void; reject: (e: Error) => void }[] = [];
  private readonly seen: { tag: string; json: unknown }[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    /** True when `child` is the netns watchdog (the real process is its child, in its own process group). */
    readonly watchdog: boolean,
  ) {
    child.stdout?.on('data', (d: Buffer) => this.onStdout(d.toString('utf8')));
    child.stderr?.on('data', (d: Buffer) => {
      if (this.err.length < LOG_CAP) this.err += d.toString('utf8');
    });
    child.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      let finalized = false;
      // Settle on 'close' (stdout fully read, so a last RESULT line is not lost), or 2 s after 'exit'
      // when a stray descendant keeps the pipes open.
      const finalize = (): void => {
        if (finalized) return;
        finalized = true;
        const info = this.exitInfo ?? { code: null, signal: null };
        for (const w of this.waiters.splice(0)) w.reject(new Error(`${name} exited (${describeExit(info)}) before ${w.tag}: ${this.stderrTail(5)}`));
        resolve(info);
      };
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        setTimeout(finalize, 2000).unref();
      });
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo ??= { code, signal };
        finalize();
      });
      child.once('error', (e) => {
        this.exitInfo = { code: -1, signal: null };
        this.err += `spawn error: ${e.message}\n`;
        finalize();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  alive(): boolean {
    return this.exitInfo === undefined;
  }

  stdout(): string {
    return this.out;
  }

  stderr(): string {
    return this.err;
  }

  stderrTail(lines = 20): string {
    return this.err.trimEnd().split('\n').slice(-lines).join('\n');
  }

  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** Waits for the next stdout line `TAG <json>`, bounded. */
  waitLine<T>(tag: string, timeoutMs: number): Promise<T> {
    const i = this.seen.findIndex((s) => s.tag === tag);
    const earlier = i >= 0 ? this.seen.splice(i, 1)[0] : undefined;
    if (earlier) return Promise.resolve(earlier.json as T);
    if (!this.alive()) return Promise.reject(new Error(`${this.name} already exited (${describeExit(this.exitInfo)}): ${this.stderrTail(5)}`));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const k = this.waiters.indexOf(w);
        if (k >= 0) this.waiters.splice(k, 1);
        reject(new Error(`${this.name}: no ${tag} line within ${timeoutMs} ms; stderr: ${this.stderrTail(5)}`));
      }, timeoutMs);
      const w = {
        tag,
        resolve: (json: unknown) => {
          clearTimeout(timer);
          resolve(json as T);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiters.push(w);
    });
  }

  private onStdout(s: string): void {
    if (this.out.length < LOG_CAP) this.out += s;
    this.partial += s;
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      const m = /^([A-Z]+) (\{.*\})\s*$/.exec(line);
      const tag = m?.[1];
      const text = m?.[2];
      if (tag === undefined || text === undefined) continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        continue;
      }
      const k = this.waiters.findIndex((w) => w.tag === tag);
      const waiter = k >= 0 ? this.waiters.splice(k, 1)[0] : undefined;
      if (waiter) waiter.resolve(json);
      else if (this.seen.length < 100) this.seen.push({ tag, json });
    }
  }
}

export function describeExit(e: { code: number | null; signal: NodeJS.Signals | null } | undefined): string {
  if (!e) return 'running';
  return e.signal ? `signal ${e.signal}` : `exit ${e.code}`;
}

/** The benchmark's own network namespace and everything started in it. */
export class BenchNamespace {
  private readonly children = new Set<NsChild>();
  private tornDown = false;

  private constructor(
    readonly prefix: string,
    readonly name: string,
  ) {}

  /**
   * Deletes namespaces of earlier, dead runs with this tag, then creates `<tag><pid>-node` with `lo` up.
   * Only this namespace's own sysctls are set (`sysctls`); the root namespace is never touched.
   */
  static async create(tag: string, sysctls: Readonly<Record<string, string>>): Promise<BenchNamespace> {
    const stale = await cleanupStaleRuns(tag);
    if (stale.length > 0) process.stderr.write(`removed namespaces of dead earlier runs: ${stale.join(', ')}\n`);
    const prefix = runPrefix(tag);
    const ns = new BenchNamespace(prefix, `${prefix}-node`);
    await run('ip', ['netns', 'add', ns.name], { timeoutMs: 10_000 });
    try {
      await run('ip', ['-n', ns.name, 'link', 'set', 'lo', 'up'], { timeoutMs: 10_000 });
      for (const [k, v] of Object.entries(sysctls)) {
        await run('ip', ['netns', 'exec', ns.name, 'sysctl', '-q', '-w', `${k}=${v}`], { timeoutMs: 10_000 });
      }
    } catch (e) {
      await ns.teardown();
      throw e;
    }
    return ns;
  }

  /**
   * Starts `cmd args` in the namespace. With `watchdogLifetimeS` it runs under the netns harness'
   * watchdog (own process group, ended when we go away, on SIGTERM or after the lifetime); the
   * watchdog's stdin must then stay open. Without it, the command itself must exit when its stdin closes.
   */
  spawn(name: string, cmd: string, args: readonly string[], opts: { watchdogLifetimeS?: number; env?: NodeJS.ProcessEnv } = {}): NsChild {
    if (this.tornDown) throw new Error('namespace already torn down');
    const nsArgs = ['netns', 'exec', this.name, cmd, ...args];
    const env = { ...process.env, ...opts.env };
    const watchdog = opts.watchdogLifetimeS !== undefined;
    const child = watchdog
      ? spawn(process.execPath, [scriptPath('watchdog.mjs'), String(opts.watchdogLifetimeS), 'ip', ...nsArgs], { stdio: ['pipe', 'pipe', 'pipe'], env })
      : spawn('ip', nsArgs, { stdio: ['pipe', 'pipe', 'pipe'], env });
    const c = new NsChild(name, child, watchdog);
    this.children.add(c);
    void c.exited.then(() => this.children.delete(c));
    return c;
  }

  /** Runs a Node script in the namespace to completion, bounded; resolves with its `RESULT` json. */
  async runScript<T>(name: string, script: string, args: readonly string[], timeoutMs: number): Promise<T> {
    const c = this.spawn(name, process.execPath, [script, ...args]);
    try {
      const result = await c.waitLine<T>('RESULT', timeoutMs);
      await Promise.race([c.exited, idle(5000)]);
      return result;
    } finally {
      await this.stop(c);
    }
  }

  /** Ends one child: SIGTERM (for a watchdog: to the whole group via the watchdog) and closed stdin, SIGKILL after 6 s. */
  async stop(c: NsChild): Promise<void> {
    if (!c.alive() || c.pid === undefined) return;
    c.child.stdin?.end();
    signal(c.pid, 'SIGTERM');
    const ended = await Promise.race([c.exited.then(() => true), idle(6000).then(() => false)]);
    if (!ended) {
      if (c.watchdog) for (const pid of descendants(c.pid)) signal(pid, 'SIGKILL');
      signal(c.pid, 'SIGKILL');
      await Promise.race([c.exited, idle(2000)]);
    }
  }

  /** Ends every child, then kills whatever is still inside the namespace and deletes it (by exact name). Idempotent. */
  async teardown(): Promise<void> {
    if (this.tornDown) return;
    this.tornDown = true;
    await Promise.all([...this.children].map((c) => this.stop(c)));
    await cleanupPrefix(this.prefix);
  }

  /** Last resort from a synchronous `exit` handler: SIGKILL every child (and its descendants), delete the namespace. */
  teardownSync(): void {
    if (this.tornDown) return;
    this.tornDown = true;
    for (const c of this.children) {
      if (c.pid === undefined) continue;
      for (const pid of descendants(c.pid)) signal(pid, 'SIGKILL');
      signal(c.pid, 'SIGKILL');
    }
    const pids = spawnSync('ip', ['netns', 'pids', this.name], { encoding: 'utf8', timeout: 5000 }).stdout ?? '';
    for (const p of pids.split(/\s+/).map(Number)) if (Number.isInteger(p) && p > 1 && p !== process.pid) signal(p, 'SIGKILL');
    spawnSync('ip', ['netns', 'del', this.name], { timeout: 5000 });
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

/** pid → parent pid for every process, from /proc/<pid>/stat. */
function parentMap(): Map<number, number[]> {
  const kids = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // `pid (comm) state ppid ...`; comm may contain spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = kids.get(ppid) ?? [];
    list.push(Number(entry));
    kids.set(ppid, list);
  }
  return kids;
}

/** Every descendant of `root` (not `root` itself), breadth first, bounded. */
export function descendants(root: number, limit = 50_000): number[] {
  const kids = parentMap();
  const outList: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined && outList.length < limit; pid = queue.shift()) {
    for (const k of kids.get(pid) ?? []) {
      outList.push(k);
      queue.push(k);
    }
  }
  return outList;
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system, including reaped children: socat's finished forks are accounted to the
 * listener that waited for them) of the live processes `pids`, in seconds.
 */
export function cpuSeconds(pids: readonly number[]): number {
  if (clockTicks === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5000 });
    const n = Number(r.stdout?.trim());
    clockTicks = Number.isInteger(n) && n > 0 ? n : 100;
  }
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after `(comm)`: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      /* exited meanwhile */
    }
  }
  return ticks / clockTicks;
}

export interface ProcStats {
  readonly processes: number;
  /** Sum of VmRSS over the processes, bytes (pages shared between forked processes are counted once per process). */
  readonly rssBytes: number;
  /** Sum of Pss (proportional set size: shared pages split between their users), bytes. */
  readonly pssBytes: number;
  readonly fds: number;
  /** RLIMIT_NOFILE soft limit of the first process. */
  readonly fdLimit: number | undefined;
}

/** VmRSS, Pss, open fds and the fd limit of `pids` (missing processes are skipped). */
export function procStats(pids: readonly number[]): ProcStats {
  let rss = 0;
  let pss = 0;
  let fds = 0;
  let n = 0;
  let fdLimit: number | undefined;
  for (const pid of pids) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (!m) continue; // kernel thread or zombie
      rss += Number(m[1]) * 1024;
      const p = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      pss += Number(p?.[1] ?? 0) * 1024;
      fds += readdirSync(`/proc/${pid}/fd`).length;
      if (fdLimit === undefined) {
        const l = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
        if (l) fdLimit = Number(l[1]);
      }
      n++;
    } catch {
      /* exited meanwhile */
    }
  }
  return { processes: n, rssBytes: rss, pssBytes: pss, fds, fdLimit };
}
