/**
 * The IPVS proxy with real traffic on a real IPVS kernel (issue 11): the host kernel has no IPVS, so
 * libs/testing/ipvs-vm boots Debian's kernel under QEMU once and runs support/ipvs-traffic-guest.sh as
 * its only step. Inside the guest the root namespace is the node, pods and an outside client are
 * namespaces, and `bin/kube-proxy --proxy-mode=ipvs --manifests=…` (the host's build) serves the
 * cluster of support/ipvs-traffic-scenario.ts: TCP and UDP to a ClusterIP from a pod and from the
 * node, a NodePort from outside (masqueraded), externalTrafficPolicy Local (source kept, health
 * check node port), session affinity, a Service without endpoints, an idle periodic resync that
 * must change nothing, an endpoint removed while a connection is open (weight 0,
 * connection kept) and one without connections (gone at once), a Service added and one deleted in
 * the manifests, SIGTERM, `--cleanup`, `auto` choosing ipvs, and a refused start (ipvsadm missing)
 * that changes no sysctl. The guest prints one CHECK line
 * per check (support/ipvs-traffic-checks.ts); each becomes one `it` here.
 * KUBE_PROXY_IPVS_E2E_MODE=iptables runs the same harness against the iptables proxy (its
 * IPVS-only checks then report SKIP), to tell harness faults from IPVS proxier faults.
 * Skipped, loudly, only when root/apt/QEMU cannot work here (VmUnavailableError).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareOrReason, runInVm, type VmImage, type VmRun } from '@kube-proxy/testing-ipvs-vm';
import { TRAFFIC_CHECKS, parseCheckReports, parseTimings, type CheckReport } from './support/ipvs-traffic-checks.js';
import { writeIpvsTrafficScenario } from './support/ipvs-traffic-scenario.js';
import { REPO_ROOT } from './support/proxy.js';

const MODE = process.env['KUBE_PROXY_IPVS_E2E_MODE'] || 'ipvs';
const GUEST_SCRIPT = fileURLToPath(new URL('./support/ipvs-traffic-guest.sh', import.meta.url));
/** Whole boot bound: the job takes ~3.5–5 min under TCG on a loaded 2-core host (see the e2e README). */
const VM_TIMEOUT_S = 540;

const prepared = await prepareOrReason();
if (typeof prepared === 'string') {
  const bar = '!'.repeat(100);
  console.warn(`\n${bar}\n!!! SKIPPING ipvs-traffic e2e suite: ${prepared}\n!!! It needs root, apt-get and QEMU (CI installs them).\n${bar}\n`);
}

(typeof prepared === 'string' ? describe.skip : describe)(`IPVS traffic in a QEMU guest: bin/kube-proxy --proxy-mode=${MODE}`, () => {
  let dir: string;
  let vm: VmRun;
  let reports: Map<string, CheckReport>;
  let failed = false;

  beforeAll(async () => {
    dir = mkdtempSync('/tmp/kp-ipvs-traffic-');
    writeIpvsTrafficScenario(dir);
    vm = await runInVm(prepared as VmImage, {
      steps: [{ argv: ['bash', GUEST_SCRIPT, dir, MODE, REPO_ROOT.replace(/\/$/, '')] }],
      timeoutSeconds: VM_TIMEOUT_S,
    });
    const out = vm.steps[0];
    writeFileSync(join(dir, 'guest.stdout'), out.stdout);
    writeFileSync(join(dir, 'guest.stderr'), out.stderr);
    writeFileSync(join(dir, 'console.log'), vm.console);
    reports = parseCheckReports(out.stdout);
    const phases = parseTimings(out.stdout).map(([p, ms]) => `${p} ${(ms / 1000).toFixed(1)} s`).join(', ');
    const checks = out.stdout.split('\n').filter((l) => l.startsWith('CHECK ')).map((l) => l.slice(0, 400)).join('\n');
    console.log(`ipvs-traffic (${MODE}): prepare ${(prepared as VmImage).durationMs} ms, boot + job ${vm.durationMs} ms, completed ${vm.completed}, exit ${out.code}; guest: ${phases}; artifacts ${dir}\n${checks}`);
  }, (VM_TIMEOUT_S + 30) * 1000);

  afterAll(() => {
    if (!failed && dir && !process.env['KUBE_PROXY_E2E_KEEP']) rmSync(dir, { recursive: true, force: true });
  });

  function unreported(name: string): string {
    const s = vm.steps[0];
    return [
      `the guest never reported "${name}" (completed ${vm.completed}, exit ${s.code}; artifacts kept in ${dir})`,
      `--- guest stdout (tail)\n${s.stdout.slice(-6000)}`,
      `--- guest stderr (tail)\n${s.stderr.slice(-3000)}`,
      `--- console (tail)\n${vm.console.slice(-2000)}`,
    ].join('\n');
  }

  it.each(TRAFFIC_CHECKS.map((c) => [c.title, c] as const))('%s', (_title, c) => {
    const r = reports.get(c.name);
    const expected = c.ipvsOnly && MODE !== 'ipvs' ? 'SKIP' : 'PASS';
    if (r === undefined || r.verdict !== expected) failed = true;
    if (r === undefined) throw new Error(unreported(c.name));
    if (r.verdict !== expected) {
      throw new Error(`${c.name}: ${r.verdict} (expected ${expected}): ${r.detail}\n${r.dump}\n(artifacts kept in ${dir})`);
    }
    expect(r.verdict).toBe(expected);
  });
});
