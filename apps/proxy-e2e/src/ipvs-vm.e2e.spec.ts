/**
 * The IPVS backend's restore text against a real IPVS kernel (issue 11): this host's kernel has no
 * IPVS, so libs/testing/ipvs-vm boots Debian's kernel under QEMU once and, in that one boot, loads
 * renderIpvsadmRestore's text with `ipvsadm --restore` and renderIpsetRestore's with
 * `ipset restore`, reads both back (`ipvsadm --save -n`, `ipset save`), applies a
 * diffDesiredStates batch (scheduler rr → mh with its flag, a real server removed, the UDP service
 * and its set entry deleted) and reads back again. Read-backs are compared with our text after the normalisation
 * support/ipvs-round-trip.ts states (kernel ordering; ipset's kernel-chosen bucketsize/initval).
 * The same boot then checks the kernel clients' parsers (src/kernel) on the real tools' output:
 * `--save -n` parsed back to exactly the desired virtual servers per family, `ipset save` after a
 * second `ipset restore -exist` of the full script, `ip -batch` creating kube-ipvs0 and binding v4 +
 * v6 addresses then removing some (`ip -o addr show` parsed), a failing `ip -batch` line stopping the
 * batch, and /proc/net/ip_vs with the one connection a SYN to a VIP makes.
 * Skipped, loudly, only when root/apt/QEMU cannot work here (VmUnavailableError).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';
import type { PacketTrace } from '@kube-proxy/core';
import { diffDesiredStates, isMissingDevice, linkBatchLines, parseIpAddrShow, parseIpsetSave, parseIpvsadmSave, parseProcNetIpVs, renderIpsetRestore, renderIpvsadmRestore } from '@kube-proxy/backend-ipvs/internal';
import { prepareOrReason, runInVm, type VmImage, type VmRun } from '@kube-proxy/testing-ipvs-vm';
import { RoundTripCluster, endpoint, normaliseIpsetSave, normaliseIpvsadmSave } from './support/ipvs-round-trip.js';
import { endpointSlice, nodeManifest, service as manifestService } from './support/manifests.js';
import { REPO_ROOT } from './support/proxy.js';

const prepared = await prepareOrReason();
if (typeof prepared === 'string') {
  const bar = '!'.repeat(100);
  console.warn(`\n${bar}\n!!! SKIPPING ipvs-vm e2e suite: ${prepared}\n!!! It needs root, apt-get and QEMU (CI installs them).\n${bar}\n`);
}

/** `later`: web loses its second endpoint and the UDP service is deleted. */
function v4Cluster(later: boolean): RoundTripCluster {
  const web = [endpoint('10.244.1.5', 8080), ...(later ? [] : [endpoint('10.244.2.6', 8080)])];
  const c = new RoundTripCluster('IPv4').service(
    { metadata: { namespace: 'ns1', name: 'web' }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    { 'ns1/web:http': web },
  );
  if (!later) {
    c.service({ metadata: { namespace: 'ns1', name: 'dns' }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.53', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } }, { 'ns1/dns:dns': [endpoint('10.244.1.7', 5353)] });
  }
  return c.service(
      { metadata: { namespace: 'ns1', name: 'sig' }, spec: { type: 'NodePort', clusterIP: '10.96.0.77', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } }, ports: [{ name: 'sig', port: 7777, protocol: 'SCTP', nodePort: 30777 }] } },
      { 'ns1/sig:sig': [endpoint('10.244.1.8', 7000), endpoint('10.244.2.9', 7000)] },
    );
}

function v6Cluster(): RoundTripCluster {
  return new RoundTripCluster('IPv6').service(
    { metadata: { namespace: 'ns1', name: 'v6' }, spec: { type: 'ClusterIP', clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a'], ipFamilies: ['IPv6'], sessionAffinity: 'ClientIP', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] } },
    { 'ns1/v6:https': [endpoint('fd00:10:244::5', 8443), endpoint('fd00:10:244::6', 8443)] },
  );
}

const before: DesiredIpvsState = v4Cluster(false).state('rr');
const after: DesiredIpvsState = v4Cluster(true).state('mh');
const v6: DesiredIpvsState = v6Cluster().state('mh');
const diff = diffDesiredStates(before, after);
const fullIpvsadm = renderIpvsadmRestore(before) + renderIpvsadmRestore(v6);
const fullIpset = renderIpsetRestore(before) + renderIpsetRestore(v6);
const afterIpset = renderIpsetRestore(after) + renderIpsetRestore(v6);
/** kube-ipvs0 with every bound address of both families and one stale address each, then the stale ones and one in use removed. */
const removed = ['10.96.0.250', 'fd00:10:96::fe', after.bindAddresses[after.bindAddresses.length - 1]];
const lines = (l: readonly string[]): string => l.map((x) => x + '\n').join('');
const linkCreate = lines(linkBatchLines({ createLink: true, add: [...after.bindAddresses, ...v6.bindAddresses, '10.96.0.250', 'fd00:10:96::fe'], remove: [] }));
const linkRemove = lines(linkBatchLines({ createLink: false, add: [], remove: removed }));
const linkFailing = lines(linkBatchLines({ createLink: false, add: [after.bindAddresses[0], '10.96.0.251'], remove: [] }));

const STEPS = [
  { argv: ['ipvsadm', '--restore'], stdin: fullIpvsadm },
  { argv: ['ipvsadm', '--save', '-n'] },
  { argv: ['ipset', 'restore'], stdin: fullIpset },
  { argv: ['ipset', 'save'] },
  { argv: ['ipvsadm', '--restore'], stdin: diff.ipvsadm },
  { argv: ['ipset', 'restore'], stdin: diff.ipset },
  { argv: ['ipvsadm', '--save', '-n'] },
  { argv: ['ipset', 'save'] },
  // The kernel clients' reading of the tools (issue 11, part 3). Absolute paths for ip, sysctl and
  // cat: the guest's busybox chroot would otherwise run its own applets of those names.
  { argv: ['ipset', 'restore', '-exist'], stdin: afterIpset }, // 8: the full script again, as every sync sends it
  { argv: ['ipset', 'save'] }, // 9
  { argv: ['/bin/ip', '-o', '-f', 'inet', 'addr', 'show', 'dev', 'kube-ipvs0'] }, // 10: no link yet
  { argv: ['/bin/ip', '-batch', '-'], stdin: linkCreate }, // 11
  { argv: ['/bin/ip', '-batch', '-'], stdin: linkRemove }, // 12
  { argv: ['/bin/ip', '-o', '-f', 'inet', 'addr', 'show', 'dev', 'kube-ipvs0'] }, // 13
  { argv: ['/bin/ip', '-o', '-f', 'inet6', 'addr', 'show', 'dev', 'kube-ipvs0'] }, // 14
  { argv: ['/bin/ip', '-batch', '-'], stdin: linkFailing }, // 15: line 1 fails, line 2 must not run
  { argv: ['/bin/ip', '-o', '-f', 'inet', 'addr', 'show', 'dev', 'kube-ipvs0'] }, // 16
  { argv: ['/sbin/sysctl', '-w', 'net.ipv4.vs.conntrack=1'] }, // 17
  // 18: one SYN to web's VIP: IPVS schedules it (a connection entry) though the pod address is unroutable here.
  { argv: ['/usr/bin/timeout', '4', 'socat', '-u', 'OPEN:/dev/null', 'TCP:10.96.0.10:80,connect-timeout=1'] },
  { argv: ['/bin/cat', '/proc/net/ip_vs'] }, // 19
] as const;

(typeof prepared === 'string' ? describe.skip : describe)('IPVS restore text against a real IPVS kernel (QEMU)', () => {
  let vm: VmRun;

  beforeAll(async () => {
    vm = await runInVm(prepared as VmImage, { steps: STEPS, timeoutSeconds: 100 });
    console.log(`ipvs-vm: prepare ${(prepared as VmImage).durationMs} ms, boot + job ${vm.durationMs} ms`);
    if (!vm.completed) throw new Error(`the guest did not finish its job; console:\n${vm.console.slice(-4000)}`);
  }, 130_000);

  function step(i: number): { code: number | null; stdout: string; stderr: string } {
    const { code, stdout, stderr } = vm.steps[i];
    return { code, stdout, stderr };
  }

  it('the test states cover TCP, UDP, SCTP, affinity, a node port, IPv6 and the mh scheduler with its flag', () => {
    expect(fullIpvsadm).toMatch(/^-A -t 10\.96\.0\.10:80 -s rr$/m);
    expect(fullIpvsadm).toMatch(/^-A -u 10\.96\.0\.53:53 -s rr$/m);
    expect(fullIpvsadm).toMatch(/^-A --sctp-service 10\.96\.0\.77:7777 -s rr -p 600$/m);
    expect(fullIpvsadm).toMatch(/^-A --sctp-service 192\.168\.0\.2:30777 /m);
    expect(fullIpvsadm).toMatch(/^-A -t \[fd00:10:96::a\]:443 -s mh -p 10800 -b mh-port$/m);
    expect(diff.ipvsadm).toMatch(/^-E -t 10\.96\.0\.10:80 -s mh -b mh-port$/m);
    expect(diff.ipvsadm).toMatch(/^-d -t 10\.96\.0\.10:80 -r 10\.244\.2\.6:8080$/m);
    expect(diff.ipvsadm).toMatch(/^-D -u 10\.96\.0\.53:53$/m);
    expect(diff.ipset).toMatch(/^del KUBE-CLUSTER-IP 10\.96\.0\.53,udp:53$/m);
  });

  it('ipvsadm --restore accepts the full text and --save -n reads it back as written', () => {
    expect(step(0)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(step(1).code).toBe(0);
    expect(normaliseIpvsadmSave(step(1).stdout)).toBe(normaliseIpvsadmSave(fullIpvsadm));
  });

  it('ipset restore accepts the full script and ipset save reads it back as written', () => {
    expect(step(2)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(step(3).code).toBe(0);
    expect(normaliseIpsetSave(step(3).stdout)).toBe(normaliseIpsetSave(fullIpset));
  });

  it('a diffDesiredStates batch (scheduler change, real server removed, service deleted) leaves exactly the new state in the kernel', () => {
    expect(step(4)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(step(5)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(normaliseIpvsadmSave(step(6).stdout)).toBe(normaliseIpvsadmSave(renderIpvsadmRestore(after) + renderIpvsadmRestore(v6)));
    expect(normaliseIpsetSave(step(7).stdout)).toBe(normaliseIpsetSave(renderIpsetRestore(after) + renderIpsetRestore(v6)));
  });

  it('parseIpvsadmSave reads the real --save -n back to exactly the desired virtual servers, per family (TCP, UDP, SCTP, -p, -b)', () => {
    expect(parseIpvsadmSave(step(1).stdout, 'IPv4')).toEqual(before.virtualServers);
    expect(parseIpvsadmSave(step(1).stdout, 'IPv6')).toEqual(v6.virtualServers);
    expect(parseIpvsadmSave(step(6).stdout, 'IPv4')).toEqual(after.virtualServers);
    expect(parseIpvsadmSave(step(6).stdout, 'IPv6')).toEqual(v6.virtualServers);
  });

  it('ipset restore -exist takes the full script again over existing sets, and parseIpsetSave reads exactly the desired entries', () => {
    expect(step(8)).toEqual({ code: 0, stdout: '', stderr: '' });
    const sets = parseIpsetSave(step(9).stdout);
    const desired = [...after.ipsets, ...v6.ipsets];
    expect([...sets.keys()]).toEqual(desired.map((s) => s.set.name));
    for (const s of desired) expect([s.set.name, [...(sets.get(s.set.name) ?? [])].sort()]).toEqual([s.set.name, s.entries]);
  });

  it('ip -batch creates kube-ipvs0 and binds then unbinds v4 and v6 addresses; ip -o addr show reads back what remains', () => {
    expect(step(10).code).not.toBe(0);
    expect(isMissingDevice(step(10).stderr, 'kube-ipvs0')).toBe(true);
    expect(step(11)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(step(12)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(after.bindAddresses.length).toBeGreaterThan(1);
    expect(parseIpAddrShow(step(13).stdout, 'IPv4')).toEqual(after.bindAddresses.slice(0, -1));
    expect(parseIpAddrShow(step(14).stdout, 'IPv6')).toEqual(v6.bindAddresses);
  });

  it('a failing ip -batch line stops the batch with exit 1 and names the line (nothing after it is applied silently)', () => {
    expect(step(15).code).toBe(1);
    expect(step(15).stderr).toBe('RTNETLINK answers: File exists\nCommand failed -:1\n');
    expect(parseIpAddrShow(step(16).stdout, 'IPv4')).not.toContain('10.96.0.251');
  });

  it('parseProcNetIpVs reads /proc/net/ip_vs with keys of the desired state and counts the one connection made', () => {
    expect(step(17).code).toBe(0);
    expect(step(19).code).toBe(0);
    const counts = parseProcNetIpVs(step(19).stdout);
    const desired = [...after.virtualServers, ...v6.virtualServers];
    expect([...counts.keys()].sort()).toEqual(desired.map((vs) => vs.key).sort());
    for (const vs of desired) expect([vs.key, [...(counts.get(vs.key)?.keys() ?? [])].sort()]).toEqual([vs.key, vs.realServers.map((r) => r.key).sort()]);
    const web = counts.get('10.96.0.10:80/TCP')?.get('10.244.1.5:8080');
    expect(web).toBeDefined();
    expect((web?.active ?? 0) + (web?.inactive ?? 0)).toBe(1);
    let others = 0;
    for (const [vs, m] of counts) for (const [rs, n] of m) if (`${vs} ${rs}` !== '10.96.0.10:80/TCP 10.244.1.5:8080') others += n.active + n.inactive;
    expect(others).toBe(0);
  });
});

/*
 * IPVS `--live` tracing (issue 22) on the same real IPVS kernel: support/ipvs-trace-guest.mjs runs in
 * its own boot, lets bin/kube-proxy --proxy-mode=ipvs --once program a ClusterIP Service with two
 * endpoints and one without endpoints, then the IPVS tracer reads the kernel (readLive) and traces a
 * connection from the node to each, and real connections show where the kernel sends them: every
 * endpoint reached is in the trace's set (rr reaches both), and the Service without endpoints is a
 * refused connection with an ICMP port unreachable sent (the kernel's ip_vs_leave), as the trace's
 * REJECT says. When the build has the `trace` subcommand, `kube-proxy trace --live -o json` in the
 * guest must give the same verdict and endpoints.
 */
const TRACE_GUEST = fileURLToPath(new URL('./support/ipvs-trace-guest.mjs', import.meta.url));
const TRACE_SCENARIO = {
  node: 'ipvs-node',
  nodeIP: '10.0.0.2',
  clusterCIDR: '10.244.0.0/16',
  pods: ['10.244.1.11', '10.244.1.12'],
  podPort: 8080,
  cases: { clusterIP: { ip: '10.96.0.10', port: 80, probes: 12 }, noEndpoints: { ip: '10.96.0.40', port: 83, probes: 2 } },
};

function traceManifests(): Record<string, unknown> {
  const s = TRACE_SCENARIO;
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      nodeManifest(s.node, s.nodeIP, '10.244.1.0/24'),
      manifestService({ name: 'web', clusterIP: s.cases.clusterIP.ip, ports: [{ name: 'http', port: s.cases.clusterIP.port, targetPort: s.podPort }] }),
      endpointSlice({ service: 'web', ports: [{ name: 'http', port: s.podPort }], endpoints: s.pods.map((ip, i) => ({ ip, podName: `web-${i}`, nodeName: s.node })) }),
      manifestService({ name: 'empty', clusterIP: s.cases.noEndpoints.ip, ports: [{ name: 'http', port: s.cases.noEndpoints.port, targetPort: s.podPort }] }),
    ],
  };
}

interface GuestCase {
  readonly trace: PacketTrace;
  readonly reached: string[];
  readonly icmpOutDestUnreachs: number;
}

interface GuestReport {
  readonly proxy?: { code: number | null; ms: number; stderr: string };
  readonly source?: string;
  readonly lookedFor?: string;
  readonly readLiveMs?: number;
  readonly cases?: Record<'clusterIP' | 'noEndpoints', GuestCase>;
  readonly cli?: { code: number | null; stdout: string; stderr: string };
  readonly error?: string;
}

(typeof prepared === 'string' ? describe.skip : describe)('IPVS trace --live against a real IPVS kernel and real connections (QEMU)', () => {
  let dir: string;
  let report: GuestReport;
  let raw: string;

  beforeAll(async () => {
    dir = mkdtempSync('/tmp/kp-ipvs-trace-');
    mkdirSync(join(dir, 'manifests'));
    writeFileSync(join(dir, 'scenario.json'), JSON.stringify(TRACE_SCENARIO));
    writeFileSync(join(dir, 'manifests', 'cluster.json'), JSON.stringify(traceManifests()));
    const vm = await runInVm(prepared as VmImage, { steps: [{ argv: [process.execPath, TRACE_GUEST, dir, REPO_ROOT.replace(/\/$/, '')] }], timeoutSeconds: 420 });
    raw = `completed ${vm.completed}, exit ${vm.steps[0]?.code}\n--- stdout\n${vm.steps[0]?.stdout.slice(-6000)}\n--- stderr\n${vm.steps[0]?.stderr.slice(-3000)}\n--- console\n${vm.console.slice(-2000)}`;
    console.log(`ipvs-vm trace: boot + job ${vm.durationMs} ms`);
    const line = vm.steps[0]?.stdout.trim().split('\n').pop() ?? '';
    report = line.startsWith('{') ? (JSON.parse(line) as GuestReport) : { error: `no report:\n${raw}` };
  }, 460_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the proxy synced in the guest and readLive found its IPVS rules (read-only tools)', () => {
    if (report.error !== undefined) throw new Error(`${report.error}\n${raw}`);
    expect(report.proxy?.code).toBe(0);
    expect(report.lookedFor).toBeUndefined();
    expect(report.source).toMatch(/^ipvsadm --save -n, ipset save, ip addr show dev kube-ipvs0, ip6?tables-(nft|legacy)-save$/);
    console.log(`ipvs-vm trace: proxy --once ${report.proxy?.ms} ms, readLive ${report.readLiveMs} ms`);
  });

  it('ClusterIP: the trace says DNAT to both endpoints, and every real connection reached one of them (both reached)', () => {
    const c = report.cases?.clusterIP;
    if (c === undefined) throw new Error(raw);
    const endpoints = TRACE_SCENARIO.pods.map((ip) => `${ip}:${TRACE_SCENARIO.podPort}`);
    expect(c.trace.verdict).toBe('DNAT');
    expect(c.trace.endpoints).toEqual(endpoints);
    expect(c.trace.path.map((s) => s.where)).toContain(`ipvs TCP ${TRACE_SCENARIO.cases.clusterIP.ip}:${TRACE_SCENARIO.cases.clusterIP.port}`);
    for (const r of c.reached) expect(endpoints).toContain(`${r}:${TRACE_SCENARIO.podPort}`);
    expect(new Set(c.reached).size).toBe(2);
  });

  it('no endpoints: the trace says REJECT, and the kernel refuses the connection with ICMP port unreachable', () => {
    const c = report.cases?.noEndpoints;
    if (c === undefined) throw new Error(raw);
    expect(c.trace.verdict).toBe('REJECT');
    expect(c.trace.endpoints).toEqual([]);
    expect(c.trace.reason).toBe(`the Service at TCP ${TRACE_SCENARIO.cases.noEndpoints.ip}:${TRACE_SCENARIO.cases.noEndpoints.port} has no ready endpoints`);
    expect(c.reached).toEqual(c.reached.map(() => 'ERR ECONNREFUSED'));
    expect(c.icmpOutDestUnreachs).toBeGreaterThanOrEqual(TRACE_SCENARIO.cases.noEndpoints.probes);
  });

  it('`kube-proxy trace --live -o json` in the guest (when the build has it) answers as the tracer does', () => {
    if (report.cli === undefined) {
      console.warn('ipvs-vm trace: this build has no `trace` subcommand; the CLI check did not run (the tracer was checked directly)');
      return;
    }
    expect(report.cli.code).toBe(0);
    const json = JSON.parse(report.cli.stdout) as PacketTrace;
    expect({ verdict: json.verdict, endpoints: json.endpoints }).toEqual({ verdict: 'DNAT', endpoints: TRACE_SCENARIO.pods.map((ip) => `${ip}:${TRACE_SCENARIO.podPort}`) });
  });
});
