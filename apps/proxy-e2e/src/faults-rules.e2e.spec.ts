/**
 * Fault suite, rule programming (issue 10): `bin/kube-proxy --proxy-mode=iptables --manifests=<tmp>` in
 * the node namespace of a simulated node, real iptables, real TCP traffic from the client and a pod.
 * Each fault must lose no rule, and show what upstream's health and metrics would show:
 *
 * - iptables-restore failing (a PATH shim, support/restore-shim.ts) and, for iptables-legacy, the
 *   xtables lock held by another process longer than the proxy's `-w 5` (support/xtables-lock.ts):
 *   while a changed Service cannot be programmed the previous rules stay (iptables-save unchanged,
 *   existing Services answer), the failures are counted
 *   (kubeproxy_sync_proxy_rules_iptables_restore_failures_total) and retried every syncPeriod, and
 *   /healthz says 200 until the change has waited 2 × syncPeriod and 503 from then on (upstream's
 *   proxier_health.go: unhealthy once now − oldest unprogrammed change ≥ healthTimeout, which
 *   cmd/kube-proxy sets to 2 × syncPeriod); once the fault ends the change is programmed and /healthz
 *   is 200 again. iptables-nft takes no xtables lock: there the same lock held changes nothing.
 * - `kill -9` of the proxy under continuous ClusterIP and NodePort traffic, then a new proxy: no
 *   request fails, the rules are present in every dump taken meanwhile, and the built-in chains'
 *   jumps keep their packet counters (a flush on start would have recreated them from zero).
 *
 * Timings use the proxy's own clock where it matters: /healthz bodies carry `currentTime`, and the
 * change's queue time is the sync_proxy_rules_last_queued_timestamp_seconds gauge.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IPTABLES_VARIANTS,
  cleanupStaleRuns,
  createSimulatedNode,
  iptables,
  iptablesCommand,
  iptablesSave,
  probe,
  runPrefix,
  startEchoServer,
  waitFor,
  type EchoServer,
  type IptablesVariant,
  type ProbeOptions,
  type ProbeResult,
  type SimulatedNode,
} from '@kube-proxy/testing-netns';
import { CheckRunner } from './support/check-runner.js';
import { failedBatches, startContinuousTraffic, type StreamResult } from './support/continuous-traffic.js';
import { endpointSlice, service, writeManifest } from './support/manifests.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { allOk, fail, onlyPods, pollProbe } from './support/probe-assertions.js';
import { PROXY_MAIN_JS, proxyArgs, startProxy, type RunningProxy } from './support/proxy.js';
import { METRIC, counterValue, metricValue, readHealthz, scrapeMetrics, type HealthzSample } from './support/proxy-metrics.js';
import { syncRetries } from './support/proxy-log.js';
import { killProxy9 } from './support/proxy-process.js';
import { createRestoreShim, type RestoreShim } from './support/restore-shim.js';
import { canonicalRules, diffCanonical, parseSave } from './support/rules-snapshot.js';
import { POD_TCP_PORT, POD_UDP_PORT, SVC, eps, writeInitialManifests } from './support/scenario.js';
import { holdXtablesLock } from './support/xtables-lock.js';

const pre = await e2ePreflight('rule faults');
const describeNetns = pre.run ? describe : describe.skip;

const TAGS: Record<IptablesVariant, string> = { nft: 'kpfn', legacy: 'kpfl' };
const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
const SYNC_PERIOD_MS = 5000;
/** Upstream's healthz timeout: 2 × syncPeriod. */
const HEALTH_TIMEOUT_MS = 2 * SYNC_PERIOD_MS;
/**
 * /healthz samples this close to the 2 × syncPeriod boundary (proxy clock) are not judged: the queue
 * time is read from a gauge with millisecond resolution and the verdict is taken a moment after it.
 */
const BOUNDARY_MARGIN_MS = 250;
/** The proxy's iptables `-w`: how long a call waits for the xtables lock before it fails. */
const XTABLES_WAIT_MS = 5000;
const METRICS_ADDR = '127.0.0.1:10249';
const HEALTHZ_ADDR = '127.0.0.1:10256';
const FIRST_SYNC_TIMEOUT_MS = existsSync(PROXY_MAIN_JS) ? 30_000 : 120_000;
/** The Service whose endpoint each fault moves (pod1 ↔ pod2). */
const FLIP = { name: 'flip', ip: '10.96.0.50', port: 80 } as const;
const HTTP = [{ name: 'http', port: POD_TCP_PORT }] as const;
const IPV4 = { ip_family: 'IPv4' } as const;

/** Which faults run for which variant: the lock only exists for iptables-legacy. */
const KILL9_VARIANTS: readonly IptablesVariant[] = ['nft'];

describeNetns.each(IPTABLES_VARIANTS)('rule faults through bin/kube-proxy (iptables-%s)', (variant) => {
  let node: SimulatedNode | undefined;
  let servers: EchoServer[] = [];
  let proxy: RunningProxy | undefined;
  const proxies: RunningProxy[] = [];
  let shim: RestoreShim | undefined;
  let dir = '';
  let manifests = '';
  let lockFile = '';
  const env: Record<string, string> = {};
  /** The pod (1 or 2) the flip Service points at in the manifests. */
  let flipPod = 1;

  const n = (): SimulatedNode => node ?? fail('topology was not created (see the beforeAll error)');
  const px = (): RunningProxy => proxy ?? fail('the proxy was not started (see the beforeAll error)');
  const pod = (i: number): string => n().ns.pods[i - 1] ?? fail(`no pod${i}`);
  const p = (ns: string, o: ProbeOptions): Promise<ProbeResult> => probe(n(), ns, { stopAfterErrors: 5, ...o });

  async function diagnostics(): Promise<string> {
    const nd = node;
    if (!nd) return '(no topology)';
    const save = await iptablesSave(nd, nd.ns.node, variant).catch((e: Error) => `iptables-${variant}-save failed: ${e.message}`);
    const calls = shim ? shim.calls().slice(-20).map((c) => `${c.at} ${c.outcome} ${c.binary}`).join('\n') : '(no shim)';
    const logs = proxies.map((q, i) => `=== proxy #${i + 1} log (last 60 lines)\n${q.tail(60)}`).join('\n');
    return `=== iptables-${variant}-save (node)\n${save}\n=== restore shim calls (last 20)\n${calls}\n${logs}\n`;
  }

  const runner = new CheckRunner({ dir: () => dir, diagnostics, proxy: () => proxy });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  function writeFlip(podIndex: number): void {
    writeManifest(manifests, 'eps-flip.yaml', endpointSlice({ service: FLIP.name, ports: HTTP, endpoints: eps(n(), [podIndex]) }));
    flipPod = podIndex;
  }

  function launch(): RunningProxy {
    const q = startProxy(
      n(),
      proxyArgs({
        manifestsDir: manifests,
        syncPeriod: `${SYNC_PERIOD_MS / 1000}s`,
        extra: [`--metrics-bind-address=${METRICS_ADDR}`, `--healthz-bind-address=${HEALTHZ_ADDR}`],
      }),
      { env: { ...env, ...shim!.env }, logFile: join(dir, `proxy-${proxies.length + 1}.log`) },
    );
    proxies.push(q);
    proxy = q;
    return q;
  }

  async function metrics(): Promise<string> {
    if (px().exited()) fail(`kube-proxy exited with ${px().exitCode()}:\n${px().tail(60)}`);
    return scrapeMetrics(n(), n().ns.node, METRICS_ADDR);
  }
  const v4 = (text: string, name: string): number | undefined => metricValue(text, name, IPV4);

  /** Waits for `q`'s first successful sync after `since` (epoch ms), by its last-sync gauge. */
  async function waitSynced(q: RunningProxy, since: number, what: string): Promise<void> {
    await waitFor(
      what,
      async () => {
        if (q.exited()) fail(`kube-proxy exited with ${q.exitCode()}:\n${q.tail(60)}`);
        const last = v4(await scrapeMetrics(n(), n().ns.node, METRICS_ADDR).catch(() => ''), METRIC.lastSync);
        return last !== undefined && last * 1000 >= since ? true : undefined;
      },
      { timeoutMs: FIRST_SYNC_TIMEOUT_MS, intervalMs: 200 },
    );
  }

  /** Every table of the node, canonical (counters and declaration order dropped). */
  async function rules(): Promise<string> {
    return canonicalRules(parseSave(await iptablesSave(n(), n().ns.node, variant)));
  }

  beforeAll(() => runner.setup(setup), 150_000);

  async function setup(): Promise<void> {
    if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), `kp-e2e-faults-${variant}-`));
    manifests = join(dir, 'manifests');
    // A per-run lock file for both variants: iptables-legacy honours it, iptables-nft never locks.
    lockFile = join(dir, 'xtables.lock');
    env['XTABLES_LOCKFILE'] = lockFile;
    shim = createRestoreShim(dir);
    await cleanupStaleRuns(TAGS[variant]);
    node = await createSimulatedNode({ prefix: runPrefix(TAGS[variant]), env });
    servers = await Promise.all(
      node.pods.map((pd) => startEchoServer(n(), pd.ns, { tcpPorts: [POD_TCP_PORT], udpPorts: [POD_UDP_PORT], maxLifetimeS: 600 })),
    );
    writeInitialManifests(manifests, node);
    writeManifest(manifests, 'svc-flip.yaml', service({ name: FLIP.name, clusterIP: FLIP.ip, ports: [{ name: 'http', port: FLIP.port, targetPort: POD_TCP_PORT }] }));
    writeFlip(1);
    await iptables(node, node.ns.node, variant, ['-t', 'mangle', '-N', HINT_CHAIN]);
    timings['setup (netns + echo servers)'] = Date.now() - started;
    const t0 = Date.now();
    await waitSynced(launch(), t0, 'the proxy to report its first sync');
    timings['proxy start → first sync'] = Date.now() - t0;
  }

  afterAll(async () => {
    shim?.passRestores();
    const stops = await Promise.all(proxies.map((q) => q.stop()));
    await Promise.all(servers.map((s) => s.stop()));
    await node?.destroy();
    console.log(runner.summary(`rule faults (iptables-${variant}) e2e timings (ms)`, `\n  proxy stops: ${JSON.stringify(stops)}`));
    if (dir && runner.failures === 0) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** The flip Service answers from `podIndex` only (20 tries). */
  async function flipServedBy(podIndex: number, what: string): Promise<void> {
    const r = await p(pod(3), { host: FLIP.ip, port: FLIP.port, count: 20, timeoutMs: 500 });
    allOk(r, `${what}: pod3 → flip`);
    onlyPods(r, [`pod${podIndex}`], `${what}: pod3 → flip`);
  }

  /** Existing Services keep working: ClusterIP from a pod, NodePort from the client. */
  async function existingServicesWork(what: string): Promise<void> {
    allOk(await p(pod(3), { host: SVC.web.ip, port: SVC.web.port, count: 20, timeoutMs: 500 }), `${what}: pod3 → web ClusterIP`);
    allOk(await p(n().ns.client, { host: n().nodeIp, port: SVC.web.nodePort, count: 20, timeoutMs: 500 }), `${what}: client → web NodePort`);
  }

  /**
   * One fault, as the issue states it: during `inject`…`clear` a change of the flip Service's endpoint
   * must fail to program without losing a rule, be counted and retried, turn /healthz 503 exactly
   * once it has waited 2 × syncPeriod, and be programmed (and /healthz 200) once the fault is over.
   */
  async function faultKeepsRulesThenRecovers(o: {
    name: string;
    inject: () => Promise<void>;
    clear: () => Promise<number>;
    /**
     * Failed attempts the window must show. Under a held lock every iptables call first waits out
     * its `-w`, and the canary's and rule checks' calls queue before the retry, so an attempt takes
     * longer than the window for a second one to finish (its start still shows the retry).
     */
    minFailedAttempts: number;
    /** Bound from the fault's end to the change being programmed. */
    recoveryBoundMs: number;
    /** Restore calls the fault made fail since `since` (the shim's call log), when known. */
    failedCalls?: (since: number) => number[];
  }): Promise<void> {
    const from = flipPod;
    const to = from === 1 ? 2 : 1;
    await flipServedBy(from, `${o.name}: before the fault`);
    const h0 = await readHealthz(n(), n().ns.node, HEALTHZ_ADDR);
    if (h0.status !== 200) fail(`${o.name}: /healthz before the fault: ${h0.status} ${h0.body}`);
    const m0 = await metrics();
    const failures0 = counterValue(m0, METRIC.restoreFailures, IPV4) ?? fail(`no ${METRIC.restoreFailures} sample:\n${m0.slice(0, 3000)}`);
    const syncs0 = v4(m0, METRIC.syncCount) ?? fail(`no ${METRIC.syncCount} sample`);
    const queued0 = v4(m0, METRIC.lastQueued) ?? 0;
    const before = await rules();
    const logOffset = px().logs().length;

    await o.inject();
    const tInjected = Date.now();
    let ended = false;
    try {
      writeFlip(to);
      const tChange = Date.now();
      // The proxy has seen the change once it queued a sync (its own clock, ms resolution).
      const queuedAt = await waitFor(
        `${o.name}: the proxy to queue a sync for the flip change`,
        async () => {
          const q = v4(await metrics(), METRIC.lastQueued);
          return q !== undefined && q > queued0 && q * 1000 >= tChange - 1000 ? q * 1000 : undefined;
        },
        { timeoutMs: 8000, intervalMs: 100 },
      );
      const boundary = queuedAt + HEALTH_TIMEOUT_MS;

      // /healthz from now until 2.5 s past the boundary, while traffic and the rules are checked.
      const samples: HealthzSample[] = [];
      const sampling = (async () => {
        for (let i = 0; i < 400 && Date.now() < boundary + 2500; i++) {
          samples.push(await readHealthz(n(), n().ns.node, HEALTHZ_ADDR, 1000));
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      let duringChecks = 0;
      try {
        while (Date.now() < boundary + 1000 && duringChecks < 10) {
          await existingServicesWork(`${o.name}: during the fault`);
          await flipServedBy(from, `${o.name}: during the fault (old rules must stay)`);
          const now = await rules();
          if (now !== before) {
            const d = diffCanonical(before, now);
            fail(`${o.name}: the rules changed during the fault:\n  only before: ${d.onlyA.join('\n    ')}\n  only now: ${d.onlyB.join('\n    ')}`);
          }
          duringChecks++;
        }
      } finally {
        await sampling;
      }

      // /healthz: 200 while the change is younger than 2 × syncPeriod, 503 once it is as old or older.
      const judged = samples.filter((s) => Number.isFinite(s.currentTime));
      if (judged.length < samples.length) fail(`${o.name}: /healthz answers without currentTime: ${JSON.stringify(samples.filter((s) => !Number.isFinite(s.currentTime)).slice(0, 3))}`);
      const early = judged.filter((s) => s.currentTime < boundary - BOUNDARY_MARGIN_MS);
      const late = judged.filter((s) => s.currentTime >= boundary + BOUNDARY_MARGIN_MS);
      const rel = (s: HealthzSample): string => `${s.status}@+${s.currentTime - queuedAt}ms`;
      if (early.length < 5 || late.length < 3) fail(`${o.name}: too few /healthz samples around the boundary: ${judged.map(rel).join(' ')}`);
      const badEarly = early.filter((s) => s.status !== 200);
      const badLate = late.filter((s) => s.status !== 503);
      if (badEarly.length > 0) fail(`${o.name}: /healthz not 200 before 2 × syncPeriod (${HEALTH_TIMEOUT_MS} ms): ${badEarly.map(rel).join(' ')} (all: ${judged.map(rel).join(' ')})`);
      if (badLate.length > 0) fail(`${o.name}: /healthz not 503 after 2 × syncPeriod (${HEALTH_TIMEOUT_MS} ms): ${badLate.map(rel).join(' ')} (all: ${judged.map(rel).join(' ')})`);
      const last200 = [...judged].reverse().find((s) => s.status === 200);
      const first503 = judged.find((s) => s.status === 503);
      timings[`${o.name}: /healthz`] =
        `${judged.length} samples; last 200 at +${last200 ? last200.currentTime - queuedAt : '-'} ms, first 503 at +${first503 ? first503.currentTime - queuedAt : '-'} ms after the change was queued (boundary +${HEALTH_TIMEOUT_MS} ms)`;

      // Counted and retried. The failure may come up to two lock waits after the change: the proxy runs
      // its commands one at a time (as upstream's runner.mu), so a restore can queue behind a flush-monitor
      // check that is itself waiting out the same xtables lock. Polled, bounded.
      let m1 = await metrics();
      let failures1 = counterValue(m1, METRIC.restoreFailures, IPV4) ?? 0;
      for (const until = Date.now() + 2 * XTABLES_WAIT_MS + 2000; !(failures1 > failures0) && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 250));
        m1 = await metrics();
        failures1 = counterValue(m1, METRIC.restoreFailures, IPV4) ?? 0;
      }
      const syncs1 = v4(m1, METRIC.syncCount) ?? 0;
      const queuedEnd = (v4(m1, METRIC.lastQueued) ?? 0) * 1000;
      if (queuedEnd !== queuedAt) fail(`${o.name}: another sync was queued during the fault (at ${queuedEnd}, the change at ${queuedAt}): the /healthz boundary is ambiguous`);
      if (!(failures1 > failures0)) fail(`${o.name}: ${METRIC.restoreFailures} did not rise (${failures0} → ${failures1})`);
      if (!(syncs1 - syncs0 >= o.minFailedAttempts)) fail(`${o.name}: fewer than ${o.minFailedAttempts} sync attempts during the fault (${METRIC.syncCount} ${syncs0} → ${syncs1})`);
      // Retried: every failed attempt is followed, one syncPeriod later, by another (proxy log). The
      // first retry is due one syncPeriod after the (possibly late) failure: waited for, bounded.
      let retries = syncRetries(px().logs().slice(logOffset), 'IPv4');
      for (const until = Date.now() + SYNC_PERIOD_MS + 3000; retries.retryGapsMs.length < 1 && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 250));
        retries = syncRetries(px().logs().slice(logOffset), 'IPv4');
      }
      if (retries.failedAttempts < o.minFailedAttempts || retries.retryGapsMs.length < 1) {
        fail(
          `${o.name}: ${retries.failedAttempts} failed sync attempt(s) and ${retries.retryGapsMs.length} retries started in the log, ` +
            `want >= ${o.minFailedAttempts} and >= 1:\n${px().tail(40)}`,
        );
      }
      const badGaps = retries.retryGapsMs.filter((g) => g < SYNC_PERIOD_MS - 200 || g > SYNC_PERIOD_MS + 3000);
      if (badGaps.length > 0) fail(`${o.name}: retries ${retries.retryGapsMs.join(', ')} ms after a failed sync, want about syncPeriod (${SYNC_PERIOD_MS} ms)`);
      const calls = o.failedCalls?.(tInjected) ?? [];
      if (o.failedCalls && calls.length < 2) fail(`${o.name}: ${calls.length} failed restore call(s) in the shim's log, want >= 2 (the first try and a retry)`);
      timings[`${o.name}: failures`] =
        `${METRIC.restoreFailures} ${failures0} → ${failures1}; sync attempts ${syncs1 - syncs0} (${retries.failedAttempts} failed, ` +
        `retried after ${retries.retryGapsMs.join(', ')} ms)` +
        (o.failedCalls ? `; ${calls.length} restore calls failed by the shim` : '') +
        `; ${duringChecks} rounds of traffic + iptables-save checks, rules unchanged`;

      // The fault ends: the change is programmed within the bound and /healthz is 200 again.
      const tCleared = await o.clear();
      ended = true;
      await pollProbe(
        `${o.name}: the flip change to be programmed after the fault`,
        () => p(pod(3), { host: FLIP.ip, port: FLIP.port, count: 8, timeoutMs: 300, stopAfterErrors: 1 }),
        (r) => r.ok === r.count && Object.keys(r.byPod).join() === `pod${to}`,
        o.recoveryBoundMs,
      );
      const programmed = Date.now() - tCleared;
      let h: HealthzSample | undefined;
      await waitFor('/healthz to be 200 again', async () => ((h = await readHealthz(n(), n().ns.node, HEALTHZ_ADDR)).status === 200 ? true : undefined), {
        timeoutMs: 3000,
        intervalMs: 100,
      }).catch(() => fail(`${o.name}: /healthz after recovery: ${h?.status} ${h?.body}`));
      timings[`${o.name}: recovery`] = `change programmed ${programmed} ms after the fault ended (bound ${o.recoveryBoundMs} ms), /healthz 200`;
      await flipServedBy(to, `${o.name}: after recovery`);
      await existingServicesWork(`${o.name}: after recovery`);
    } finally {
      if (!ended) await o.clear().catch(() => undefined);
    }
  }

  it('iptables-restore failing (PATH shim): previous rules stay, failures counted and retried, /healthz 503 only after 2 × syncPeriod, recovery after the fault', () =>
    check('restore-fails', async () => {
      const s = shim!;
      await faultKeepsRulesThenRecovers({
        name: 'restore-fails',
        minFailedAttempts: 2,
        inject: async () => s.failRestores(),
        clear: async () => {
          s.passRestores();
          return Date.now();
        },
        // The next retry is at most one syncPeriod away; a sync takes a moment on a loaded machine.
        recoveryBoundMs: SYNC_PERIOD_MS + 5000,
        failedCalls: (since) => s.calls().filter((c) => c.outcome === 'fail' && c.at >= since).map((c) => c.at),
      });
      if (!s.calls().some((c) => c.outcome === 'pass' && c.binary === iptablesCommand(variant, 'iptables-restore'))) {
        fail(`the proxy never ran ${iptablesCommand(variant, 'iptables-restore')} through the shim`);
      }
    }));

  if (variant === 'legacy') {
    it(`xtables lock held by another process longer than -w (${XTABLES_WAIT_MS / 1000} s): previous rules stay, failure counted and retried, /healthz 503 only after 2 × syncPeriod, recovery once released`, () =>
      check('xtables-lock', async () => {
        let release: (() => Promise<number>) | undefined;
        await faultKeepsRulesThenRecovers({
          name: 'xtables-lock',
          minFailedAttempts: 1,
          inject: async () => {
            // Held past the boundary plus the checks; the sleep bounds it if release() never ran.
            release = (await holdXtablesLock(n(), n().ns.node, lockFile, 60)).release;
          },
          clear: async () => (release ? release() : Date.now()),
          // Calls already waiting get the lock within a second; the retry is at most a syncPeriod
          // away, and may queue behind one more -w wait of a canary check.
          recoveryBoundMs: SYNC_PERIOD_MS + XTABLES_WAIT_MS + 5000,
        });
        if (!/holding the xtables lock|Resource temporarily unavailable/.test(px().logs())) {
          fail(`the proxy log never mentions the xtables lock:\n${px().tail(40)}`);
        }
      }));
  } else {
    it('iptables-nft takes no xtables lock: a change is programmed while another process holds XTABLES_LOCKFILE', () =>
      check('xtables-lock-nft', async () => {
        const from = flipPod;
        const to = from === 1 ? 2 : 1;
        const failures0 = counterValue(await metrics(), METRIC.restoreFailures, IPV4) ?? 0;
        const holder = await holdXtablesLock(n(), n().ns.node, lockFile, 30);
        try {
          const t0 = Date.now();
          writeFlip(to);
          await pollProbe(
            'the flip change to be programmed while the lock is held',
            () => p(pod(3), { host: FLIP.ip, port: FLIP.port, count: 8, timeoutMs: 300, stopAfterErrors: 1 }),
            (r) => r.ok === r.count && Object.keys(r.byPod).join() === `pod${to}`,
            // Well below the -w wait: a proxy waiting for the lock could not make it.
            XTABLES_WAIT_MS - 1000,
          );
          timings['xtables-lock-nft: change programmed while locked'] = Date.now() - t0;
          const failures1 = counterValue(await metrics(), METRIC.restoreFailures, IPV4) ?? 0;
          if (failures1 !== failures0) fail(`restore failures rose while the lock was held (${failures0} → ${failures1})`);
        } finally {
          await holder.release();
        }
      }));
  }

  if (KILL9_VARIANTS.includes(variant)) {
    it('kill -9 under continuous ClusterIP and NodePort traffic, then a restart: no failed request, rules never absent, no flush on start', () =>
      check('kill-9', async () => {
        const nd = n();
        const save = iptablesCommand(variant, 'iptables-save');
        /** Packet counter of the nat PREROUTING → KUBE-SERVICES jump (nat sees each new connection once). */
        const jumpPackets = async (): Promise<number> => {
          const dump = (await nd.exec(nd.ns.node, save, ['-c', '-t', 'nat'])).stdout;
          const m = /^\[(\d+):\d+\] -A PREROUTING .*-j KUBE-SERVICES\b/m.exec(dump);
          return m ? Number(m[1]) : fail(`no PREROUTING → KUBE-SERVICES jump:\n${dump}`);
        };
        /** The web Service's rules are all there: ClusterIP and NodePort matches, its chain with both endpoints. */
        const webRulesPresent = (nat: string): boolean => {
          const svc = /^-A KUBE-SERVICES -d 10\.96\.0\.10\/32 .*-j (KUBE-SVC-\S+)/m.exec(nat)?.[1];
          if (!svc || !new RegExp(`^-A KUBE-NODEPORTS .*--dport ${SVC.web.nodePort} .*-j KUBE-EXT-`, 'm').test(nat)) return false;
          const seps = nat.split('\n').filter((l) => l.startsWith(`-A ${svc} `) && l.includes('-j KUBE-SEP-'));
          return seps.length === 2 && /^-A PREROUTING .*-j KUBE-SERVICES/m.test(nat);
        };
        if (!webRulesPresent(await iptablesSave(nd, nd.ns.node, variant, 'nat'))) fail('the web rules are not in place before the kill');
        const packets0 = await jumpPackets();

        // Rules watcher: iptables-save of nat back to back until stopped (bounded: 2000 dumps / 90 s).
        let watching = true;
        const absent: number[] = [];
        let dumps = 0;
        const tWatch = Date.now();
        const watcher = (async () => {
          while (watching && dumps < 2000 && Date.now() - tWatch < 90_000) {
            const nat = await iptablesSave(nd, nd.ns.node, variant, 'nat');
            dumps++;
            if (!webRulesPresent(nat)) absent.push(Date.now() - tWatch);
          }
        })();
        const traffic = startContinuousTraffic(nd, [
          { what: 'pod3 → ClusterIP', ns: pod(3), host: SVC.web.ip, port: SVC.web.port },
          { what: 'client → NodePort', ns: nd.ns.client, host: nd.nodeIp, port: SVC.web.nodePort },
        ]);
        let results: StreamResult[] = [];
        try {
          await new Promise((r) => setTimeout(r, 2000));
          const tKill = Date.now();
          const killed = await killProxy9(px());
          timings['kill-9: SIGKILL → exit'] = `${Date.now() - tKill} ms (pid ${killed.pid}, watchdog exit ${killed.code})`;
          if (killed.code !== 137) fail(`the proxy did not die of SIGKILL: exit ${killed.code}`);
          // No proxy for a moment: the kernel keeps serving.
          await new Promise((r) => setTimeout(r, 1000));
          const tStart = Date.now();
          const second = launch();
          await waitSynced(second, tStart, 'the restarted proxy to report its first sync');
          const tSynced = Date.now();
          timings['kill-9: restart → first sync'] = tSynced - tStart;
          await new Promise((r) => setTimeout(r, 1000));
          results = await traffic.stop();
          timings['kill-9: traffic'] =
            `${results.map((s) => `${s.requests} ${s.what}`).join(' + ')} requests over ${Date.now() - traffic.startedAt} ms; ` +
            `no proxy from +${tKill - traffic.startedAt} to +${tStart - traffic.startedAt} ms, second synced at +${tSynced - traffic.startedAt} ms`;
        } finally {
          await traffic.stop().catch(() => undefined);
          watching = false;
          await watcher;
        }
        const failed = failedBatches(results);
        if (failed.length > 0) fail(`requests failed across kill -9 + restart:\n  ${failed.join('\n  ')}`);
        if (results.some((s) => s.requests < 100)) fail(`too little traffic: ${timings['kill-9: traffic']}`);
        timings['kill-9: rules watcher'] = `${dumps} nat dumps, web rules absent in ${absent.length}`;
        if (dumps < 10) fail(`only ${dumps} rule dumps during the restart: the watcher proves nothing`);
        if (absent.length > 0) fail(`the web rules were absent in ${absent.length} of ${dumps} dumps (at +${absent.slice(0, 10).join(', +')} ms)`);
        // Every request was a new connection through nat PREROUTING: if the jump had been deleted and
        // recreated (a flush on start), its counter would hold only the packets since then.
        const packets1 = await jumpPackets();
        const requests = results.reduce((a, s) => a + s.requests, 0);
        timings['kill-9: PREROUTING jump packets'] = `${packets0} → ${packets1} (+${packets1 - packets0}; ${requests} requests sent)`;
        if (packets1 - packets0 < requests) {
          fail(`the PREROUTING → KUBE-SERVICES counter grew by ${packets1 - packets0} for ${requests} new connections: the jump was recreated (flushed on start)`);
        }
        if (px().exited()) fail(`the restarted proxy exited (${px().exitCode()})`);
      }));
  }
});

if (!pre.run) {
  it('rule fault e2e skipped (not root or no ip netns)', () => undefined);
}
