/**
 * Real-kernel e2e of the proxy's SIGTERM / SIGINT handling (issue 10, hole 3): `bin/kube-proxy` in iptables
 * mode (not dry-run) inside the node namespace of a simulated node must stop on SIGTERM or SIGINT, leave
 * its rules in place and exit 0 — also when the signal arrives while an iptables-restore is running,
 * which is when execa's signal-exit used to re-raise the signal and the proxy died with 143.
 *
 * To have a restore in flight at a known moment, PATH starts with a directory whose
 * `iptables-{nft,legacy}-restore` wrappers write a marker file, sleep RESTORE_DELAY_MS and then exec the
 * real binary (a slow restore, as on a node with a big table). Signals go straight to the proxy's pid
 * (found with `ip netns pids`), not through the watchdog, so exactly one (or two) arrive.
 *
 * Root-only; skipped (loudly) otherwise. Nothing touches the root namespace.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { cleanupStaleRuns, createSimulatedNode, iptablesSave, run, runPrefix, waitFor, type SimulatedNode } from '@kube-proxy/testing-netns';
import { fail } from './support/probe-assertions.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { KUBE_PROXY_BIN, PROXY_MAIN_JS, REPO_ROOT, startProxy, type RunningProxy } from './support/proxy.js';

const pre = await e2ePreflight('shutdown signals');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpsig';
const RESTORE_DELAY_MS = 3000;
const START_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;
/** A Service of examples/ (node-1) whose ClusterIP rule the first sync programs. */
const EXAMPLE_CLUSTER_IP = '10.96.0.10/32';

/** The real binary's absolute path (the wrapper must not find itself on PATH). */
function realBinary(name: string): string {
  for (const d of (process.env['PATH'] ?? '/usr/sbin:/sbin').split(delimiter)) {
    const p = join(d, name);
    if (d && existsSync(p)) return p;
  }
  return fail(`${name} is not on PATH; install with: ${INSTALL_HINT}`);
}

/** Writes the slow iptables-restore wrappers into `dir`; they drop `<markers>/restore.<pid>` when they start. */
function writeSlowRestoreWrappers(dir: string, markers: string): void {
  for (const name of ['iptables-nft-restore', 'iptables-legacy-restore']) {
    const file = join(dir, name);
    writeFileSync(
      file,
      `#!/bin/sh\n# test wrapper: a slow ${name}\n: > '${markers}/restore.'$$\nsleep ${RESTORE_DELAY_MS / 1000}\nexec '${realBinary(name)}' "$@"\n`,
    );
    chmodSync(file, 0o755);
  }
}

describeNetns('SIGTERM / SIGINT through bin/kube-proxy (iptables, real netns)', () => {
  let node: SimulatedNode | undefined;
  let dir = '';
  const proxies: RunningProxy[] = [];
  const timings: Record<string, string> = {};
  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');

  beforeAll(async () => {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    dir = mkdtempSync(join(tmpdir(), 'kp-e2e-signals-'));
    await cleanupStaleRuns(TAG);
    node = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1 });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.stop()));
    await node?.destroy();
    console.log(`shutdown-signals e2e timings:\n${Object.entries(timings).map(([k, v]) => `  ${k}: ${v}`).join('\n')}`);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Flushes what an earlier case programmed, so each case starts from an empty node. */
  async function flushTables(): Promise<void> {
    for (const bin of ['iptables-nft', 'iptables-legacy']) {
      for (const table of ['nat', 'filter', 'mangle']) {
        await n().exec(n().ns.node, bin, ['-t', table, '-F'], { allowFailure: true });
        await n().exec(n().ns.node, bin, ['-t', table, '-X'], { allowFailure: true });
      }
    }
  }

  /** Starts the proxy with the slow-restore wrappers first on PATH and waits until a restore is in flight. */
  async function startWithRestoreInFlight(name: string): Promise<{ proxy: RunningProxy; pid: number; markers: string }> {
    await flushTables();
    const wrappers = mkdtempSync(join(dir, `${name}-bin-`));
    const markers = mkdtempSync(join(dir, `${name}-markers-`));
    writeSlowRestoreWrappers(wrappers, markers);
    const args = ['--proxy-mode=iptables', `--manifests=${join(REPO_ROOT, 'examples')}`, '--hostname-override=node-1', '-v=2'];
    const proxy = startProxy(n(), args, { env: { PATH: `${wrappers}${delimiter}${process.env['PATH'] ?? ''}` }, logFile: join(dir, `${name}.log`) });
    proxies.push(proxy);
    await waitFor(
      'an iptables-restore of the proxy to be running',
      async () => {
        if (proxy.exited()) fail(`kube-proxy exited with ${proxy.exitCode()}:\n${proxy.tail(40)}`);
        return readdirSync(markers).length > 0 ? true : undefined;
      },
      { timeoutMs: START_TIMEOUT_MS, intervalMs: 50 },
    );
    return { proxy, pid: await proxyPid(), markers };
  }

  /** The proxy's own pid: the process in the node namespace whose command line runs bin/kube-proxy. */
  async function proxyPid(): Promise<number> {
    const r = await run('ip', ['netns', 'pids', n().ns.node], { timeoutMs: 10_000 });
    const pids = r.stdout.split(/\s+/).map(Number).filter((x) => Number.isInteger(x) && x > 1);
    const mine = pids.filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(KUBE_PROXY_BIN);
      } catch {
        return false;
      }
    });
    if (mine.length !== 1) fail(`want exactly one kube-proxy process in ${n().ns.node}, found ${JSON.stringify(mine)} of ${JSON.stringify(pids)}`);
    return mine[0]!;
  }

  /** Waits (bounded) for the proxy's exit after `signal`s sent to its pid `gapMs` apart. */
  async function signalAndWait(p: RunningProxy, pid: number, signals: readonly NodeJS.Signals[], gapMs = 300) {
    const t0 = Date.now();
    for (const [i, s] of signals.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
      process.kill(pid, s);
    }
    const exit = await waitFor(
      'the proxy to exit',
      async () => (p.exited() ? { code: p.exitCode(), ms: Date.now() - t0 } : undefined),
      { timeoutMs: RESTORE_DELAY_MS + 10_000, intervalMs: 20 },
    );
    return exit;
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} while an iptables-restore runs: logs "shutting down", exits 0 and leaves the rules in place`, async () => {
      const { proxy, pid } = await startWithRestoreInFlight(signal.toLowerCase());
      const exit = await signalAndWait(proxy, pid, [signal]);
      timings[`${signal} during a restore → exit`] = `${JSON.stringify(exit)}`;
      if (exit.code !== 0) fail(`kube-proxy exited with ${exit.code} after ${signal}, want 0 (143/130 = killed by the signal):\n${proxy.tail(30)}`);
      expect(proxy.logs()).toContain(`Received signal, shutting down; programmed rules are left in place signal="${signal}"`);
      // The restore that was running when the signal came finished; nothing was removed on the way out.
      const nat = await iptablesSave(n(), n().ns.node, 'nft', 'nat');
      const legacy = await iptablesSave(n(), n().ns.node, 'legacy', 'nat').catch(() => '');
      if (!`${nat}\n${legacy}`.includes(EXAMPLE_CLUSTER_IP)) fail(`no service rules left after ${signal}:\n${nat}\n${legacy}`);
    }, START_TIMEOUT_MS + RESTORE_DELAY_MS + 20_000);
  }

  it('a second SIGTERM during the shutdown ends the process at once with exit 1', async () => {
    const { proxy, pid } = await startWithRestoreInFlight('second');
    const exit = await signalAndWait(proxy, pid, ['SIGTERM', 'SIGTERM'], 300);
    timings['SIGTERM, SIGTERM 300 ms later → exit'] = JSON.stringify(exit);
    expect(exit.code).toBe(1);
    expect(proxy.logs()).toContain('second signal (SIGTERM) during shutdown; exiting now with 1');
    // Promptly: well before the slow restore the first shutdown was waiting for would have finished.
    expect(exit.ms).toBeLessThan(300 + RESTORE_DELAY_MS - 500);
  }, START_TIMEOUT_MS + RESTORE_DELAY_MS + 20_000);
});
