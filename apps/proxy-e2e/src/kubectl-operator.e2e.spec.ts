/**
 * The proxy driven through the real kubectl, exactly as an operator would (issue 10, "What to build"
 * 4, "a real client"): `bin/kube-proxy --master` in iptables-nft mode inside a simulated node's
 * namespace (api-support/api-node-rig.ts) against the TestApiServer there, and /usr/bin/kubectl run in
 * the same namespace with a private kubeconfig, HOME and cache (libs/testing/test-apiserver/src/kubectl.ts).
 * `kubectl apply -f` of a Service + EndpointSlice → pod3's traffic reaches the endpoint;
 * `kubectl apply` of a changed file, `kubectl patch` of the endpoint (strategic merge) and of the port
 * (JSON patch) → traffic follows; `kubectl delete` of the slice → connections are rejected; of the
 * Service → its rules are gone. kubectl validates against the server (OpenAPI v3 + strict field
 * validation), no `--validate=false`.
 *
 * Root-only; skipped (loudly) otherwise. About 30 s.
 */
import { iptablesSave, waitFor, type ProbeResult } from '@kube-proxy/testing-netns';
import { Kubectl } from '@kube-proxy/testing-apiserver';
import { ApiNodeRig, POD_TCP_PORT, VARIANT } from './api-support/api-node-rig.js';
import { node as nodeObject } from './api-support/objects.js';
import { CheckRunner } from './support/check-runner.js';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';
import { allOk, fail, hitsAll, onlyPods } from './support/probe-assertions.js';

const pre = await e2ePreflight('kubectl operator');
const describeNetns = pre.run && Kubectl.available() ? describe : describe.skip;

const TAG = 'kpko';
const MIN_SYNC_PERIOD_MS = 1000;
/** A watch event → minSyncPeriod → iptables-restore → traffic, on a loaded 2-core machine. */
const CHANGE_BOUND_MS = MIN_SYNC_PERIOD_MS + 5000;
const VIP = '10.96.0.80';
const SLICE = 'web-k7x2q';

function manifests(podIps: readonly string[], opts: { port?: number; targetPort?: number } = {}): string {
  const port = opts.port ?? 80;
  const target = opts.targetPort ?? POD_TCP_PORT;
  return `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  clusterIP: ${VIP}
  selector: {app: web}
  ports:
  - name: http
    port: ${port}
    protocol: TCP
    targetPort: ${target}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${SLICE}
  namespace: default
  labels:
    kubernetes.io/service-name: web
    endpointslice.kubernetes.io/managed-by: operator
addressType: IPv4
endpoints:
${podIps.map((ip) => `- addresses: [${ip}]\n  conditions: {ready: true, serving: true, terminating: false}\n  nodeName: node-1`).join('\n')}
ports:
- name: http
  port: ${target}
  protocol: TCP
`;
}

describeNetns('kubectl as an operator: apply, patch and delete drive bin/kube-proxy --master (iptables-nft)', () => {
  let rig: ApiNodeRig | undefined;
  let kubectl: Kubectl | undefined;
  const r = (): ApiNodeRig => rig ?? fail('the rig was not built (see the beforeAll error)');
  const k = (): Kubectl => kubectl ?? fail('kubectl was not set up');
  const runner = new CheckRunner({ dir: () => rig?.dir ?? '/tmp', diagnostics: async () => (rig ? rig.diagnostics() : '(no rig)'), proxy: () => rig?.proxy });
  const timings = runner.timings;
  const check = (name: string, fn: () => Promise<void>): Promise<void> => runner.check(name, fn);
  const pods = (res: ProbeResult) => Object.keys(res.byPod).sort().join(',');

  /** Runs kubectl (in the node namespace), timing it; a non-zero exit fails with its output. */
  async function kc(what: string, args: readonly string[]): Promise<string> {
    const t0 = Date.now();
    const out = await k().ok(args);
    timings[`kubectl ${what}`] = Date.now() - t0;
    return out;
  }

  beforeAll(
    () =>
      runner.setup(async () => {
        if (pre.missingTools.length > 0) fail(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
        await ApiNodeRig.start(
          {
            tag: TAG,
            timings,
            lifetimeS: 240,
            objects: [nodeObject()],
            proxyArgs: ['--iptables-sync-period=30s', `--iptables-min-sync-period=${MIN_SYNC_PERIOD_MS / 1000}s`, '-v=2'],
          },
          (built) => (rig = built),
        );
        const nodeNs = r().node.ns.node;
        // kubectl runs where the operator's client would reach the API server: in the node namespace.
        kubectl = new Kubectl({ server: r().server.url, wrap: (file, args) => ({ file: 'ip', args: ['netns', 'exec', nodeNs, file, ...args] }) });
      }),
    120_000,
  );

  afterAll(async () => {
    kubectl?.dispose();
    const stop = rig ? await rig.stop(runner.failures > 0) : undefined;
    console.log(runner.summary('kubectl operator e2e timings (ms)', `\n  proxy stop: ${JSON.stringify(stop)}`));
  }, 40_000);

  it(`kubectl apply -f (Service + EndpointSlice): pod3 → ${VIP}:80 reaches pod1 within ${CHANGE_BOUND_MS} ms`, () =>
    check('apply', async () => {
      const out = await kc('apply (create)', ['apply', '-f', k().file('web.yaml', manifests([r().podIp(1)]))]);
      if (!out.includes('service/web created') || !out.includes(`endpointslice.discovery.k8s.io/${SLICE} created`)) fail(`kubectl apply said:\n${out}`);
      const t0 = Date.now();
      await r().until('web to answer', { ip: VIP, port: 80 }, (x) => x.ok === x.count, CHANGE_BOUND_MS);
      timings['apply → traffic'] = Date.now() - t0;
      const res = await r().probe({ host: VIP, port: 80, count: 20 });
      allOk(res, 'pod3 → web');
      onlyPods(res, ['pod1'], 'pod3 → web');
      // What kubectl read back is what the proxy serves.
      const got = JSON.parse(await kc('get', ['get', 'endpointslice', SLICE, '-o', 'json'])) as { endpoints: Array<{ addresses: string[] }> };
      if (got.endpoints.map((e) => e.addresses[0]).join() !== r().podIp(1)) fail(`kubectl get endpointslice: ${JSON.stringify(got.endpoints)}`);
    }));

  it('kubectl apply of a changed file (a second endpoint): traffic balances over pod1 and pod3', () =>
    check('apply-change', async () => {
      const out = await kc('apply (configure)', ['apply', '-f', k().file('web.yaml', manifests([r().podIp(1), r().podIp(3)]))]);
      if (!out.includes(`endpointslice.discovery.k8s.io/${SLICE} configured`) || !out.includes('service/web unchanged')) fail(`kubectl apply said:\n${out}`);
      const t0 = Date.now();
      await r().until('web to reach pod3 too', { ip: VIP, port: 80 }, (x) => x.ok === x.count && !!x.byPod['pod3'], CHANGE_BOUND_MS, 12);
      timings['apply change → traffic'] = Date.now() - t0;
      const res = await r().probe({ host: VIP, port: 80, count: 40 });
      allOk(res, 'pod3 → web with two endpoints');
      onlyPods(res, ['pod1', 'pod3'], 'pod3 → web with two endpoints');
      hitsAll(res, ['pod1', 'pod3'], 'pod3 → web with two endpoints');
    }));

  it('kubectl patch of the EndpointSlice (strategic merge: endpoints replaced by pod2): traffic follows to pod2 only', () =>
    check('patch-endpoint', async () => {
      const patch = JSON.stringify({ endpoints: [{ addresses: [r().podIp(2)], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1' }] });
      const out = await kc('patch endpointslice', ['patch', 'endpointslice', SLICE, '-p', patch]);
      if (!out.includes('patched')) fail(`kubectl patch said:\n${out}`);
      const t0 = Date.now();
      await r().until('web to reach only pod2', { ip: VIP, port: 80 }, (x) => x.ok === x.count && pods(x) === 'pod2', CHANGE_BOUND_MS, 20);
      timings['patch endpoint → traffic'] = Date.now() - t0;
      const res = await r().probe({ host: VIP, port: 80, count: 30 });
      allOk(res, 'pod3 → web after the patch');
      onlyPods(res, ['pod2'], 'pod3 → web after the patch');
    }));

  it('kubectl patch of the Service port (JSON patch 80 → 8081): the new port answers, the old one stops answering', () =>
    check('patch-port', async () => {
      const out = await kc('patch service', ['patch', 'service', 'web', '--type=json', '-p', '[{"op":"replace","path":"/spec/ports/0/port","value":8081}]']);
      if (!out.includes('service/web patched')) fail(`kubectl patch said:\n${out}`);
      const t0 = Date.now();
      await r().until('web:8081 to answer', { ip: VIP, port: 8081 }, (x) => x.ok === x.count, CHANGE_BOUND_MS);
      timings['patch port → traffic'] = Date.now() - t0;
      const res = await r().probe({ host: VIP, port: 8081, count: 10 });
      allOk(res, 'pod3 → web:8081');
      onlyPods(res, ['pod2'], 'pod3 → web:8081');
      const old = await r().probe({ host: VIP, port: 80, count: 3, timeoutMs: 500, stopAfterErrors: 3 });
      if (old.ok !== 0) fail(`web:80 still answers after the port moved: ${JSON.stringify(old.byPod)}`);
    }));

  it('kubectl delete of the EndpointSlice: connections are rejected (REJECT, no endpoints); of the Service: its rules are gone', () =>
    check('delete', async () => {
      const out = await kc('delete endpointslice', ['delete', 'endpointslice', SLICE]);
      if (!out.includes(`endpointslice.discovery.k8s.io "${SLICE}" deleted`)) fail(`kubectl delete said:\n${out}`);
      const t0 = Date.now();
      // Rejected, not timed out: the proxy's REJECT rule for a service without endpoints answers at once.
      await r().until('web:8081 to be rejected', { ip: VIP, port: 8081 }, (x) => x.ok === 0 && (x.errors['ECONNREFUSED'] ?? 0) > 0, CHANGE_BOUND_MS, 2);
      timings['delete slice → rejected'] = Date.now() - t0;
      const rejected = await r().probe({ host: VIP, port: 8081, count: 5, timeoutMs: 1000, stopAfterErrors: 5 });
      if (rejected.ok !== 0 || rejected.errors['ECONNREFUSED'] !== 5) fail(`want 5 refused connections: ${JSON.stringify(rejected.errors)}`);
      if ((rejected.timing.maxErrorTryMs['ECONNREFUSED'] ?? 0) > 500) fail(`refusals took up to ${rejected.timing.maxErrorTryMs['ECONNREFUSED']} ms: not a REJECT`);

      const out2 = await kc('delete service', ['delete', 'service', 'web']);
      if (!out2.includes('service "web" deleted')) fail(`kubectl delete said:\n${out2}`);
      const t1 = Date.now();
      const nd = r().node;
      await waitFor(
        "the deleted service's rules to leave nat and filter",
        async () => {
          const [nat, filter] = await Promise.all([iptablesSave(nd, nd.ns.node, VARIANT, 'nat'), iptablesSave(nd, nd.ns.node, VARIANT, 'filter')]);
          return nat.includes(VIP) || filter.includes(VIP) ? undefined : true;
        },
        { timeoutMs: CHANGE_BOUND_MS, intervalMs: 200 },
      );
      timings['delete service → rules gone'] = Date.now() - t1;
      const none = await k().run(['get', 'services,endpointslices']);
      if (none.code !== 0 || !(none.stdout + none.stderr).includes('No resources found')) fail(`kubectl get after the deletes: ${none.code} ${none.stdout}${none.stderr}`);
      const gone = await r().probe({ host: VIP, port: 8081, count: 2, timeoutMs: 500, stopAfterErrors: 2 });
      if (gone.ok !== 0) fail(`the deleted service still answers: ${JSON.stringify(gone.byPod)}`);
    }));
});

if (!pre.run || !Kubectl.available()) {
  it('kubectl operator e2e skipped (not root, no ip netns, or no kubectl)', () => {
    if (pre.run && !Kubectl.available()) throw new Error('kubectl is not installed (expected at /usr/bin/kubectl or $KUBECTL)');
  });
}
