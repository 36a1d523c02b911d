import { idle } from './exec.js';
import { scriptPath, type HarnessScript } from './scripts.js';
import type { SimulatedNode } from './topology.js';

export interface EchoServerOptions {
  /** Name the server reports; defaults to the pod name (`pod1`, ...). */
  readonly name?: string;
  readonly tcpPorts?: readonly number[];
  readonly udpPorts?: readonly number[];
  /** Hard upper bound on the server's life. Default 600 s. */
  readonly maxLifetimeS?: number;
  /** How long to wait for `READY`. Default 10 s. */
  readonly readyTimeoutMs?: number;
}

export interface EchoServer {
  readonly name: string;
  readonly ns: string;
  readonly pid: number | undefined;
  /** Collected stderr of the server (for failure reports). */
  stderr(): string;
  /** Closes its stdin (it exits by itself), then waits up to 3 s and kills it if needed. */
  stop(): Promise<void>;
}

/** Starts `echo-server.mjs` inside namespace `ns` and waits until it listens on every port. */
export async function startEchoServer(node: SimulatedNode, ns: string, opts: EchoServerOptions = {}): Promise<EchoServer> {
  const pod = node.pods.find((p) => p.ns === ns);
  const name = opts.name ?? pod?.name ?? ns;
  const args = ['--name', name, '--max-lifetime-s', String(opts.maxLifetimeS ?? 600)];
  if (opts.tcpPorts?.length) args.push('--tcp', opts.tcpPorts.join(','));
  if (opts.udpPorts?.length) args.push('--udp', opts.udpPorts.join(','));
  return startServerScript(node, ns, name, 'echo-server.mjs', args, opts.readyTimeoutMs);
}

/**
 * Starts a harness server script (`scripts/<script> ...args`) in namespace `ns` and waits for the
 * `READY ` line it prints once it listens. The script exits when its stdin closes; stop() closes it,
 * waits up to 3 s and kills it if needed.
 */
export async function startServerScript(
  node: SimulatedNode,
  ns: string,
  name: string,
  script: HarnessScript,
  args: readonly string[],
  readyTimeoutMs = 10_000,
): Promise<EchoServer> {
  const child = node.spawn(ns, process.execPath, [scriptPath(script), ...args]);
  let err = '';
  let out = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    if (err.length < 64_000) err += d;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${name} in ${ns} not ready after ${readyTimeoutMs} ms: ${err}`));
    }, readyTimeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      out += d;
      if (out.includes('READY ')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${script} ${name} in ${ns} exited early (${code ?? sig}): ${err}`));
    });
  });
  return {
    name,
    ns,
    pid: child.pid,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin?.end();
      const ok = await Promise.race([exited.then(() => true), idle(3000).then(() => false)]);
      if (!ok) {
        child.kill('SIGKILL');
        await Promise.race([exited, idle(2000)]);
      }
    },
  };
}

export interface ProbeOptions {
  readonly proto?: 'tcp' | 'udp';
  readonly host: string;
  readonly port: number;
  readonly count?: number;
  /** Per-try timeout. Default 1000 ms. */
  readonly timeoutMs?: number;
  readonly concurrency?: number;
  /** Local (source) address to bind. */
  readonly bind?: string;
  /** Fixed UDP source port: every try reuses one socket, i.e. one conntrack flow. */
  readonly sport?: number;
  readonly intervalMs?: number;
  /** Bound for the whole run (tries not started by then are reported as `NOT_RUN`). */
  readonly maxTotalMs?: number;
  /** Give up after this many failed tries (the rest are `NOT_RUN`). Default 0 = never. */
  readonly stopAfterErrors?: number;
  /**
   * End the run early, before the next try, once this file exists (a flow as long as the test needs);
   * `count` then reports the tries made. The other bounds still apply.
   */
  readonly stopFile?: string;
}

export interface ProbeTry {
  readonly pod?: string;
  readonly source?: string;
  /** Source port the pod saw (for UDP through a proxy: identifies the proxy's per-client association). */
  readonly sourcePort?: number;
  readonly error?: string;
  readonly ms: number;
}

export interface ProbeResult {
  readonly proto: 'tcp' | 'udp';
  readonly target: string;
  readonly count: number;
  readonly ok: number;
  readonly failed: number;
  /** Answers per pod name. */
  readonly byPod: Readonly<Record<string, number>>;
  /** Source addresses the pods saw. */
  readonly sources: Readonly<Record<string, number>>;
  /** `<pod> <source>` pairs. */
  readonly byPodSource: Readonly<Record<string, number>>;
  /** Errors by code: ECONNREFUSED, TIMEOUT, EHOSTUNREACH, NOT_RUN, ... */
  readonly errors: Readonly<Record<string, number>>;
  readonly timing: {
    /** When the run began (ms since epoch, the same clock in every namespace). */
    readonly startedAtMs: number;
    readonly totalMs: number;
    readonly minTryMs: number | null;
    readonly maxTryMs: number | null;
    readonly maxErrorTryMs: Readonly<Record<string, number>>;
  };
  readonly tries: readonly ProbeTry[];
}

/** Runs `probe.mjs` inside `ns` and returns its summary. Bounded by the probe's own limits plus slack. */
export async function probe(node: SimulatedNode, ns: string, opts: ProbeOptions): Promise<ProbeResult> {
  const o = {
    proto: opts.proto ?? 'tcp',
    host: opts.host,
    port: opts.port,
    count: opts.count ?? 1,
    timeoutMs: opts.timeoutMs ?? 1000,
    concurrency: opts.concurrency ?? 1,
    intervalMs: opts.intervalMs ?? 0,
    ...(opts.bind !== undefined ? { bind: opts.bind } : {}),
    ...(opts.sport !== undefined ? { sport: opts.sport } : {}),
    ...(opts.stopAfterErrors !== undefined ? { stopAfterErrors: opts.stopAfterErrors } : {}),
    ...(opts.stopFile !== undefined ? { stopFile: opts.stopFile } : {}),
  };
  const naturalBound = Math.ceil(o.count / o.concurrency) * (o.timeoutMs + o.intervalMs) + 2000;
  const maxTotalMs = Math.min(opts.maxTotalMs ?? naturalBound, 600_000);
  const r = await node.exec(ns, process.execPath, [scriptPath('probe.mjs'), JSON.stringify({ ...o, maxTotalMs })], {
    timeoutMs: maxTotalMs + 10_000,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as ProbeResult;
  } catch {
    throw new Error(`probe in ${ns} printed no JSON: ${r.stdout.slice(0, 500)} ${r.stderr.slice(0, 500)}`);
  }
}

/** A one-line human summary of a probe result, for assertion messages and logs. */
export function describeProbe(r: ProbeResult): string {
  const fmt = (o: Readonly<Record<string, number>>): string =>
    Object.entries(o)
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || '-';
  return (
    `${r.proto} ${r.target}: ${r.ok}/${r.count} ok; pods {${fmt(r.byPod)}}; sources {${fmt(r.sources)}}; ` +
    `errors {${fmt(r.errors)}}; ${r.timing.totalMs} ms total, max try ${r.timing.maxTryMs} ms`
  );
}
