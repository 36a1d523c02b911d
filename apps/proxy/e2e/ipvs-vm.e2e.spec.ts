/**
 * The IPVS backend's restore text against a real IPVS kernel (issue 11): this host's kernel has no
 * IPVS, so tools/src/ipvs-vm boots Debian's kernel under QEMU once and, in that one boot, loads
 * renderIpvsadmRestore's text with `ipvsadm --restore` and renderIpsetRestore's with
 * `ipset restore`, reads both back (`ipvsadm --save -n`, `ipset save`), applies a
 * diffDesiredStates batch (scheduler rr → mh with its flag, a real server removed, the UDP service
 * and its set entry deleted) and reads back again. Read-backs are compared with our text after the normalisation
 * support/ipvs-round-trip.ts states (kernel ordering; ipset's kernel-chosen bucketsize/initval).
 * Skipped, loudly, only when root/apt/QEMU cannot work here (VmUnavailableError).
 */
import type { DesiredIpvsState } from '@kube-proxy/backend-ipvs';
import { diffDesiredStates, renderIpsetRestore, renderIpvsadmRestore } from '@kube-proxy/backend-ipvs';
import { VmUnavailableError, prepare, runInVm, type VmImage, type VmRun } from '@kube-proxy/tools/ipvs-vm';
import { RoundTripCluster, endpoint, normaliseIpsetSave, normaliseIpvsadmSave } from './support/ipvs-round-trip.js';

async function image(): Promise<VmImage | string> {
  try {
    return await prepare();
  } catch (e) {
    if (e instanceof VmUnavailableError) return e.message;
    throw e;
  }
}

const prepared = await image();
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

const STEPS = [
  { argv: ['ipvsadm', '--restore'], stdin: fullIpvsadm },
  { argv: ['ipvsadm', '--save', '-n'] },
  { argv: ['ipset', 'restore'], stdin: fullIpset },
  { argv: ['ipset', 'save'] },
  { argv: ['ipvsadm', '--restore'], stdin: diff.ipvsadm },
  { argv: ['ipset', 'restore'], stdin: diff.ipset },
  { argv: ['ipvsadm', '--save', '-n'] },
  { argv: ['ipset', 'save'] },
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
});
