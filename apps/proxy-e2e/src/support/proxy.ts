import { appendFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { idle, type CommandResult, type SimulatedNode } from '@kube-proxy/testing-netns';

/** Repository root (apps/proxy-e2e/src/support → ../../../../). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** `bin/kube-proxy`; `KUBE_PROXY_E2E_BIN` overrides it (e.g. to debug the harness against another build). */
export const KUBE_PROXY_BIN = process.env['KUBE_PROXY_E2E_BIN'] || fileURLToPath(new URL('../../../../bin/kube-proxy', import.meta.url));

/** The build `bin/kube-proxy` runs (it builds on demand when missing, which takes a while). */
export const PROXY_MAIN_JS = fileURLToPath(new URL('../../../proxy/dist/main.js', import.meta.url));

export interface ProxyArgsOptions {
  readonly manifestsDir: string;
  /** `--proxy-mode`; default `iptables`. */
  readonly mode?: string;
  readonly hostname?: string;
  readonly clusterCidr?: string;
  readonly syncPeriod?: string;
  readonly minSyncPeriod?: string;
  readonly verbosity?: number;
  readonly extra?: readonly string[];
}

/** The command line the lead specified for the e2e runs. */
export function proxyArgs(o: ProxyArgsOptions): string[] {
  return [
    `--proxy-mode=${o.mode ?? 'iptables'}`,
    `--manifests=${o.manifestsDir}`,
    `--hostname-override=${o.hostname ?? 'node-1'}`,
    `--cluster-cidr=${o.clusterCidr ?? '10.244.0.0/16'}`,
    `--iptables-sync-period=${o.syncPeriod ?? '2s'}`,
    `--iptables-min-sync-period=${o.minSyncPeriod ?? '0s'}`,
    `-v=${o.verbosity ?? 2}`,
    ...(o.extra ?? []),
  ];
}

export interface RunningProxy {
  readonly child: ChildProcess;
  /** Everything the proxy wrote so far (stdout + stderr, capped). */
  logs(): string;
  /** The last `lines` lines of the log. */
  tail(lines?: number): string;
  exited(): boolean;
  exitCode(): number | null;
  /**
   * SIGTERM, then (via the watchdog) SIGKILL after 5 s. Resolves with the proxy's exit code (128+n if it
   * died of signal n). `graceMs` only bounds how long to wait beyond the watchdog's own 5 s.
   */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const LOG_CAP = 4_000_000;

/**
 * Starts `bin/kube-proxy <args>` inside the node namespace (`ip netns exec <node> ...`) under the
 * harness watchdog: the proxy runs in its own process group, which the watchdog ends on stop(), when
 * this test process dies (even SIGKILLed), or after 15 minutes. Logs go to `logFile` as well.
 */
export function startProxy(
  node: SimulatedNode,
  args: readonly string[],
  opts: { env?: Readonly<Record<string, string | undefined>>; logFile?: string } = {},
): RunningProxy {
  if (!existsSync(KUBE_PROXY_BIN)) throw new Error(`${KUBE_PROXY_BIN} does not exist`);
  const child = node.spawn(node.ns.node, KUBE_PROXY_BIN, args, {
    env: { ...opts.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' },
    stdio: ['pipe', 'pipe', 'pipe'],
    watchdogLifetimeS: 900,
  });
  let log = '';
  const onData = (d: Buffer): void => {
    const s = d.toString('utf8');
    if (log.length < LOG_CAP) log += s;
    if (opts.logFile) appendFileSync(opts.logFile, s);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitedP = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  // The watchdog forwards SIGTERM to the proxy's process group and SIGKILLs it 5 s later.
  const signal = (sig: NodeJS.Signals): void => {
    try {
      child.kill(sig);
    } catch {
      /* gone */
    }
  };
  return {
    child,
    logs: () => log,
    tail: (lines = 60) => log.split('\n').slice(-lines).join('\n'),
    exited: () => exit !== undefined,
    exitCode: () => exit?.code ?? null,
    stop: async (graceMs = 5000) => {
      if (exit) return exit;
      signal('SIGTERM');
      const r = await Promise.race([exitedP, idle(graceMs + 6000).then(() => undefined)]);
      if (r) return r;
      signal('SIGKILL'); // last resort: the watchdog itself hangs
      return (await Promise.race([exitedP, idle(3000).then(() => undefined)])) ?? { code: null, signal: 'SIGKILL' };
    },
  };
}

/** Runs `bin/kube-proxy <args>` to completion inside the node namespace (for `--once` / `--cleanup`). */
export function runProxyOnce(
  node: SimulatedNode,
  args: readonly string[],
  opts: { env?: Readonly<Record<string, string | undefined>>; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return node.exec(node.ns.node, KUBE_PROXY_BIN, args, {
    env: { ...opts.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' },
    timeoutMs: opts.timeoutMs ?? 60_000,
    allowFailure: true,
  });
}
