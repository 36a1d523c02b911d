/**
 * The contract between the guest script (support/ipvs-traffic-guest.sh) and the jest spec: the checks
 * the guest must report, in order, each as one stdout line `CHECK <name> PASS|FAIL|SKIP <detail>`,
 * and, after a FAIL, a `=== DUMP <name> BEGIN` … `=== DUMP <name> END` block (ipvsadm, ipset,
 * kube-ipvs0, iptables-save, conntrack, the proxy log tail). The spec turns each entry into one `it`,
 * so a check the guest never reached fails by name instead of vanishing.
 */

export interface TrafficCheck {
  readonly name: string;
  /** The behaviour, as the `it` title. */
  readonly title: string;
  /** Only meaningful with --proxy-mode=ipvs (the guest reports SKIP under the iptables harness self-test). */
  readonly ipvsOnly?: boolean;
}

export const TRAFFIC_CHECKS: readonly TrafficCheck[] = [
  { name: 'pods-reachable', title: 'the guest topology works before any proxy: the client pod reaches every pod echo server (TCP, UDP, held TCP) directly' },
  { name: 'auto-mode', title: 'with --proxy-mode unset (auto, --dry-run --once) the proxy chooses ipvs on this IPVS kernel' },
  { name: 'refused-start', title: 'with ipvsadm missing, --proxy-mode=ipvs refuses to start (exit 1) and leaves the IPVS and conntrack sysctls unchanged', ipvsOnly: true },
  { name: 'proxy-started', title: 'bin/kube-proxy with the requested mode starts from --manifests and the first ClusterIP answers' },
  { name: 'ipvs-state', title: 'after the first sync kube-ipvs0 holds every ClusterIP, ipvsadm lists the virtual servers and KUBE-CLUSTER-IP holds the entries', ipvsOnly: true },
  { name: 'sysctls', title: 'the proxy itself set net.ipv4.vs.conntrack=1 and route_localnet=1 in the guest', ipvsOnly: true },
  { name: 'clusterip-tcp-pod', title: 'TCP to a ClusterIP from a pod reaches both endpoints and keeps the pod as the source' },
  { name: 'clusterip-udp-pod', title: 'UDP to a ClusterIP from a pod is answered by an endpoint that saw the pod as the source' },
  { name: 'clusterip-tcp-node', title: 'TCP to a ClusterIP from the node itself is answered' },
  { name: 'clusterip-udp-node', title: 'UDP to a ClusterIP from the node itself is answered' },
  { name: 'nodeport-tcp-outside', title: 'TCP to a NodePort from outside the node is answered with the source masqueraded to a node address' },
  { name: 'nodeport-udp-outside', title: 'UDP to a NodePort from outside the node is answered with the source masqueraded to a node address' },
  { name: 'local-policy', title: 'externalTrafficPolicy Local: NodePort traffic from outside reaches only the local endpoint and keeps the client source' },
  { name: 'local-health-check', title: 'externalTrafficPolicy Local: the healthCheckNodePort answers 200 with one local endpoint from outside' },
  { name: 'session-affinity', title: 'sessionAffinity ClientIP sends every connection of one client to the same endpoint' },
  { name: 'no-endpoints', title: 'a Service without endpoints refuses TCP connections at once and reaches no pod' },
  { name: 'resync-steady', title: 'an idle periodic resync of both families leaves the kernel state unchanged and TCP and UDP to a ClusterIP answering throughout', ipvsOnly: true },
  { name: 'drain-weight-zero', title: 'an endpoint removed while it holds a connection stays in IPVS with weight 0', ipvsOnly: true },
  { name: 'drain-idle-removed', title: 'an endpoint removed while it has no connections leaves IPVS at once', ipvsOnly: true },
  { name: 'drain-open-connection', title: 'the connection held to the removed endpoint keeps working' },
  { name: 'drain-new-connections', title: 'new connections go only to the remaining endpoint' },
  { name: 'manifest-new-service', title: 'a Service added to the manifests file starts answering' },
  { name: 'manifest-deleted-service', title: 'a Service deleted from the manifests stops answering and leaves IPVS and kube-ipvs0' },
  { name: 'sigterm', title: 'SIGTERM stops the proxy with exit 0 and leaves the programmed state in place' },
  { name: 'cleanup', title: 'bin/kube-proxy --cleanup exits 0 and leaves no virtual servers, KUBE- ipsets, kube-ipvs0 or KUBE- chains' },
];

export type Verdict = 'PASS' | 'FAIL' | 'SKIP';

export interface CheckReport {
  readonly verdict: Verdict;
  readonly detail: string;
  /** The dump block that followed a FAIL ('' otherwise). */
  readonly dump: string;
}

/** Parses the guest's stdout: the last report of each check name wins (a check reports once). */
export function parseCheckReports(stdout: string): Map<string, CheckReport> {
  const out = new Map<string, CheckReport>();
  const lines = stdout.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^CHECK (\S+) (PASS|FAIL|SKIP)(?: (.*))?$/.exec(lines[i]);
    if (m === null) continue;
    let dump = '';
    if (lines[i + 1] === `=== DUMP ${m[1]} BEGIN`) {
      const end = lines.indexOf(`=== DUMP ${m[1]} END`, i + 1);
      dump = lines.slice(i + 2, end < 0 ? undefined : end).join('\n');
    }
    out.set(m[1], { verdict: m[2] as Verdict, detail: m[3] ?? '', dump });
  }
  return out;
}

/** The timing lines the guest prints (`TIME <phase> <ms>`), for the suite's summary. */
export function parseTimings(stdout: string): [string, number][] {
  return [...stdout.matchAll(/^TIME (\S+) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]);
}
