/**
 * The readiness signal (issue 23 item 5b): `bin/kube-proxy --master` in iptables-nft mode inside a
 * simulated node's namespace (api-support/api-node-rig.ts) against the TestApiServer there, which keeps
 * what clients PATCH on nodes/{name}/status. The Node starts with a kubelet-style Ready condition.
 *
 * 1. After the first full sync of every family the Node carries KubeProxyReady=True (reason
 *    RulesProgrammed, a message naming the mode and families), written as one strategic merge PATCH of
 *    nodes/node-1/status; the kubelet's Ready condition is untouched.
 * 2. While nothing changes, no further writes (the heartbeat is 5 minutes).
 * 3. iptables-restore made to fail (the PATH shim of the rule-fault suite, support/restore-shim.ts)
 *    while a Service is added: /healthz turns 503 once the change has waited 2 × syncPeriod, and the
 *    condition turns False (SyncFailing) then too, not before.
 * 4. The fault ends: the Service is programmed and the condition is True again.
 *
 * The proxy runs with --iptables-sync-period=3s, so the healthz bound is 6 s. Root-only; skipped
 * (loudly) otherwise. About 40 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep, waitFor } from '@kube-proxy/testing-netns';
import type { KubeObject, RecordedRequest } from '@kube-proxy/testing-apiserver';
import { ApiNodeRig, POD_TCP_PORT } from './api-support/api-node-rig.js';
import { endpointSlice, node as nodeObject, service, NODE_NAME } from './api-support/objects.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { fail } from './support/probe-assertions.js';
import { readHealthz } from './support/proxy-metrics.js';
import { createRestoreShim, type RestoreShim } from './support/restore-shim.js';

const pre = await e2ePreflight('node readiness condition');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpnr';
const SYNC_PERIOD_S = 3;
const BOUND_MS = 2 * SYNC_PERIOD_S * 1000;
/** The reporter looks once a second; a PATCH and the host's answer on a loaded 2-core machine. */
const SLACK_MS = 4000;
const HEALTHZ = '127.0.0.1:10256';
const COND = 'KubeProxyReady';

const WEB = { name: 'web', ip: '10.96.0.10', port: 80 } as const;
const LATE = { name: 'late', ip: '10.96.0.30', port: 80 } as const;

/** The kubelet's condition, which the proxy's PATCH must leave alone. */
const KUBELET_READY = {
  type: 'Ready',
  status: 'True',
  reason: 'KubeletReady',
  message: 'kubelet is posting ready status',
  lastHeartbeatTime: '2026-12-06T16:00:00Z',
  lastTransitionTime: '2026-12-06T16:00:00Z',
};

describeNetns('Node readiness: bin/kube-proxy --master sets KubeProxyReady after its first sync, False past the healthz bound (iptables-nft)', () => {
  let rig: ApiNodeRig | undefined;
  let shim: RestoreShim | undefined;
  const shimParent = mkdtempSync(join(tmpdir(), `kp-e2e-${TAG}-shim-`));
  const r = (): ApiNodeRig => rig ?? fail('the rig was not built (see the beforeAll error)');
  const runner = new CheckRunner({
    dir: () => rig?.dir ?? shimParent,
    diagnostics: async () => `${rig ? await rig.diagnostics() : '(no rig)'}\n=== conditions\n${JSON.stringify(await conditions().catch((e: Error) => e.message), null, 1)}`,
    proxy: () => rig?.proxy,
  });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);

  const conditions = () => r().server.nodeConditions(NODE_NAME);
  const readiness = async () => (await conditions()).find((c) => c['type'] === COND);
  const statusPatches = async (since: number): Promise<RecordedRequest[]> =>
    (await r().server.requestsSince(since)).filter((q) => q.method === 'PATCH' && q.path === `/api/v1/nodes/${NODE_NAME}/status`);
  /** Waits (bounded) until the condition has `status`; returns it and when it was seen. */
  async function until(status: 'True' | 'False', what: string, timeoutMs: number): Promise<{ c: Record<string, string>; at: number }> {
    const c = await waitFor(what, async () => {
      const x = await readiness();
      return x?.['status'] === status ? x : undefined;
    }, { timeoutMs, intervalMs: 200 });
    return { c, at: Date.now() };
  }

  beforeAll(
    () =>
      runner.setup(async () => {
        if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
        shim = createRestoreShim(shimParent);
        const withKubelet = (): KubeObject => {
          const n = nodeObject() as KubeObject & { status: Record<string, unknown> };
          return { ...n, status: { ...n.status, conditions: [KUBELET_READY] } };
        };
        await ApiNodeRig.start(
          {
            tag: TAG,
            timings,
            lifetimeS: 240,
            firstSyncIp: WEB.ip,
            objects: (x) => [
              withKubelet(),
              service({ name: WEB.name, clusterIP: WEB.ip, port: WEB.port, targetPort: POD_TCP_PORT }),
              endpointSlice({ service: WEB.name, endpoints: [x.podIp(1)] }),
            ],
            proxyArgs: [`--iptables-sync-period=${SYNC_PERIOD_S}s`, '--iptables-min-sync-period=1s', `--healthz-bind-address=${HEALTHZ}`, '-v=2'],
            proxyEnv: shim.env,
          },
          (built) => (rig = built),
        );
      }),
    120_000,
  );

  afterAll(async () => {
    shim?.passRestores();
    const stop = rig ? await rig.stop(runner.failures > 0) : undefined;
    if (runner.failures === 0) rmSync(shimParent, { recursive: true, force: true });
    console.log(runner.summary('node readiness e2e timings (ms)', `\n  proxy stop: ${JSON.stringify(stop)}`));
  }, 40_000);

  it('sets KubeProxyReady=True after the first sync with one strategic merge PATCH of nodes/status, leaving the kubelet condition alone', () =>
    check('ready', async () => {
      const t0 = Date.now();
      const { c } = await until('True', 'KubeProxyReady=True on the Node', 10_000);
      timings['first sync in the kernel → condition True'] = Date.now() - t0;
      if (c['reason'] !== 'RulesProgrammed') fail(`reason ${c['reason']}`);
      if (!/^kube-proxy \(iptables mode\) has programmed the Service rules of IPv4( and IPv6)?; ready since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(c['message'] ?? '')) {
        fail(`message ${JSON.stringify(c['message'])}`);
      }
      const since = Date.parse(c['lastTransitionTime'] ?? '');
      if (!(since >= t0 - 120_000 && since <= Date.now())) fail(`lastTransitionTime ${c['lastTransitionTime']} is not this run's`);
      if (c['lastHeartbeatTime'] !== c['lastTransitionTime']) fail(`heartbeat ${c['lastHeartbeatTime']} ≠ transition ${c['lastTransitionTime']} on the first write`);
      const all = await conditions();
      if (JSON.stringify(all.find((x) => x['type'] === 'Ready')) !== JSON.stringify(KUBELET_READY)) fail(`the kubelet's Ready condition changed: ${JSON.stringify(all)}`);
      const patches = await statusPatches(0);
      if (patches.length !== 1) fail(`${patches.length} PATCHes of nodes/${NODE_NAME}/status, want 1`);
      if (!patches[0]!.contentType?.startsWith('application/strategic-merge-patch+json')) fail(`content type ${patches[0]!.contentType}`);
      const writes = (await r().server.requestsSince(0)).filter((q) => q.method !== 'GET' && q.method !== 'POST');
      if (writes.length !== 1) fail(`writes other than the status PATCH: ${JSON.stringify(writes.map((q) => `${q.method} ${q.path}`))}`);
    }));

  it('writes nothing more while nothing changes', () =>
    check('quiet', async () => {
      const since = Date.now();
      await sleep(3 * SYNC_PERIOD_S * 1000); // three periodic syncs
      const n = (await statusPatches(since)).length;
      if (n !== 0) fail(`${n} status PATCHes while nothing changed`);
    }));

  it(`goes False (SyncFailing) when a change stays unprogrammed for the healthz bound (${BOUND_MS} ms), not before, as /healthz turns 503`, () =>
    check('sync-failing', async () => {
      shim!.failRestores();
      const queued = Date.now();
      await r().server.create(service({ name: LATE.name, clusterIP: LATE.ip, port: LATE.port, targetPort: POD_TCP_PORT }));
      await r().server.create(endpointSlice({ service: LATE.name, endpoints: [r().podIp(2)] }));
      const { c, at } = await until('False', 'KubeProxyReady=False', BOUND_MS + SLACK_MS + 2000);
      timings['change queued → condition False'] = at - queued;
      // The proxy saw the Service after `queued`: the change cannot have waited the bound before it.
      if (at - queued < BOUND_MS) fail(`False after ${at - queued} ms, before the ${BOUND_MS} ms healthz bound`);
      if (c['reason'] !== 'SyncFailing') fail(`reason ${c['reason']}`);
      if (!/^kube-proxy \(iptables mode\) has failed to program IPv4 .*for longer than the healthz bound of 6s; not ready since /.test(c['message'] ?? '')) fail(`message ${JSON.stringify(c['message'])}`);
      const h = await readHealthz(r().node, r().node.ns.node, HEALTHZ);
      if (h.status !== 503) fail(`/healthz ${h.status} while the condition is False: ${h.body}`);
      if (shim!.calls().filter((x) => x.outcome === 'fail').length < 2) fail('the shim did not fail the restores (first try and a retry)');
      const patches = await statusPatches(0);
      if (patches.length !== 2) fail(`${patches.length} status PATCHes so far, want 2 (True, False)`);
    }));

  it('is True again once the rules are programmed', () =>
    check('recovered', async () => {
      shim!.passRestores();
      const t0 = Date.now();
      const { c } = await until('True', 'KubeProxyReady=True again', 2 * SYNC_PERIOD_S * 1000 + SLACK_MS);
      timings['fault ended → condition True'] = Date.now() - t0;
      if (!(await r().nat()).includes(`${LATE.ip}/32`)) fail('the late Service is not in the nat table');
      if (c['reason'] !== 'RulesProgrammed') fail(`reason ${c['reason']}`);
      const h = await readHealthz(r().node, r().node.ns.node, HEALTHZ);
      if (h.status !== 200) fail(`/healthz ${h.status} after recovery: ${h.body}`);
      const patches = await statusPatches(0);
      if (patches.length !== 3) fail(`${patches.length} status PATCHes, want 3 (True, False, True)`);
    }));
});
