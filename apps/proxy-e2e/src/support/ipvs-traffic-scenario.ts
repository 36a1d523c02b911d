/**
 * The cluster the IPVS traffic e2e serves inside the QEMU guest, written once on the host as
 * manifests plus a `scenario.env` the guest script sources, so every address, port and name lives
 * here and nowhere else. The guest (support/ipvs-traffic-guest.sh) builds the topology from the env
 * file and copies the manifest files into the proxy's `--manifests` dir as its steps change the
 * cluster (an endpoint drained, a service added, another deleted).
 *
 * Topology inside the guest (its root namespace is the node):
 *   outside 10.0.0.1 ── veth ── 10.0.0.2 node (the Node's InternalIP; default route via outside)
 *   node ── one routed veth per pod (node side 10.244.0.1/32, pod side <ip>/32, like a routed CNI):
 *   client 10.244.1.10 (no servers), pod1 .11, pod2 .12, pod3 .13 (TCP 8080 and UDP 5353 answer
 *   "<pod> <peer address>"; TCP 9090 answers the same and then echoes each line as "<pod> <line>").
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { endpointSlice, nodeManifest, service, writeManifest, type EndpointSpec } from './manifests.js';

export const NODE = 'ipvs-node';
export const OTHER_NODE = 'other-node';
export const NODE_IP = '10.0.0.2';
export const OUTSIDE_IP = '10.0.0.1';
/** The node-side address of every pod veth: what masqueraded traffic reaches a pod from. */
export const POD_GATEWAY = '10.244.0.1';
export const CLUSTER_CIDR = '10.244.0.0/16';
export const POD_CIDR = '10.244.1.0/24';
export const CLIENT_IP = '10.244.1.10';
export const PODS = { pod1: '10.244.1.11', pod2: '10.244.1.12', pod3: '10.244.1.13' } as const;
export type PodName = keyof typeof PODS;
const POD_NAMES = Object.keys(PODS) as PodName[];

export const ECHO_TCP = 8080;
export const ECHO_UDP = 5353;
export const HOLD_TCP = 9090;

/** ClusterIP, port and (where it has one) node port of each Service. */
export const SVC = {
  web: { ip: '10.96.0.10', tcp: 80, udp: 53, nodeTcp: 30080, nodeUdp: 30053 },
  local: { ip: '10.96.0.20', tcp: 81, nodeTcp: 30081, healthCheck: 30281 },
  sticky: { ip: '10.96.0.30', tcp: 82 },
  empty: { ip: '10.96.0.40', tcp: 83 },
  drain: { ip: '10.96.0.50', tcp: 84 },
  gone: { ip: '10.96.0.60', tcp: 85 },
  late: { ip: '10.96.0.70', tcp: 86 },
} as const;

function ep(pod: PodName, nodeName: string = NODE): EndpointSpec {
  return { ip: PODS[pod], podName: pod, nodeName };
}

function list(items: Record<string, unknown>[]): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'List', items };
}

function webObjects(): Record<string, unknown>[] {
  return [
    service({
      name: 'web', type: 'NodePort', clusterIP: SVC.web.ip,
      ports: [
        { name: 'http', port: SVC.web.tcp, targetPort: ECHO_TCP, nodePort: SVC.web.nodeTcp },
        { name: 'dns', port: SVC.web.udp, targetPort: ECHO_UDP, protocol: 'UDP', nodePort: SVC.web.nodeUdp },
      ],
    }),
    endpointSlice({
      service: 'web',
      ports: [{ name: 'http', port: ECHO_TCP }, { name: 'dns', port: ECHO_UDP, protocol: 'UDP' }],
      endpoints: [ep('pod1'), ep('pod2')],
    }),
  ];
}

/**
 * externalTrafficPolicy Local: pod3 is on this node, pod2 is (as far as this slice says) on another.
 * A LoadBalancer (without ingress IPs), because only those carry a healthCheckNodePort.
 */
function localObjects(): Record<string, unknown>[] {
  return [
    service({
      name: 'local', type: 'LoadBalancer', clusterIP: SVC.local.ip, externalTrafficPolicy: 'Local', healthCheckNodePort: SVC.local.healthCheck,
      ports: [{ name: 'http', port: SVC.local.tcp, targetPort: ECHO_TCP, nodePort: SVC.local.nodeTcp }],
    }),
    endpointSlice({ service: 'local', ports: [{ name: 'http', port: ECHO_TCP }], endpoints: [ep('pod3'), ep('pod2', OTHER_NODE)] }),
  ];
}

function simple(name: 'sticky' | 'empty' | 'gone' | 'late', pods: readonly PodName[], affinity = false): Record<string, unknown>[] {
  return [
    service({ name, clusterIP: SVC[name].ip, ports: [{ name: 'http', port: SVC[name].tcp, targetPort: ECHO_TCP }], ...(affinity ? { sessionAffinity: 'ClientIP' as const } : {}) }),
    endpointSlice({ service: name, ports: [{ name: 'http', port: ECHO_TCP }], endpoints: pods.map((p) => ep(p)) }),
  ];
}

function drainObjects(pods: readonly PodName[]): Record<string, unknown> {
  return list([
    service({ name: 'drain', clusterIP: SVC.drain.ip, ports: [{ name: 'hold', port: SVC.drain.tcp, targetPort: HOLD_TCP }] }),
    endpointSlice({ service: 'drain', ports: [{ name: 'hold', port: HOLD_TCP }], endpoints: pods.map((p) => ep(p)) }),
  ]);
}

/**
 * The pod the guest keeps after the drain step when the held connection landed on `held`: the next
 * one round the list. The third pod (no connections) is removed together with `held`.
 */
export function drainKeeps(held: PodName): PodName {
  return POD_NAMES[(POD_NAMES.indexOf(held) + 1) % POD_NAMES.length];
}

function env(): string {
  const vars: Record<string, string | number> = {
    NODE, OTHER_NODE, NODE_IP, OUTSIDE_IP, POD_GATEWAY, CLUSTER_CIDR, CLIENT_IP,
    PODS: POD_NAMES.join(' '), ...Object.fromEntries(POD_NAMES.map((p) => [`IP_${p}`, PODS[p]])),
    ECHO_TCP, ECHO_UDP, HOLD_TCP,
  };
  for (const [name, s] of Object.entries(SVC)) {
    for (const [k, v] of Object.entries(s)) vars[`${name.toUpperCase()}_${k.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`] = v;
  }
  for (const p of POD_NAMES) vars[`DRAIN_KEEPS_${p}`] = drainKeeps(p);
  // Only [A-Za-z0-9._/ -] values: the guest sources this file with bash.
  return Object.entries(vars).map(([k, v]) => {
    if (!/^[A-Za-z0-9._/ -]*$/.test(String(v))) throw new Error(`scenario value ${k}=${v} is not shell-safe`);
    return `${k}='${v}'\n`;
  }).join('');
}

/**
 * Writes the scenario into `dir` (a host temp dir the guest reads through its 9p root):
 * `scenario.env`; `initial/` (node, web, local, sticky, empty, drain with all three pods, gone);
 * `drain-keep-<pod>.yaml` for each possible drain outcome; `late.yaml`.
 */
export function writeIpvsTrafficScenario(dir: string): void {
  const initial = join(dir, 'initial');
  mkdirSync(initial, { recursive: true });
  writeFileSync(join(dir, 'scenario.env'), env());
  writeManifest(initial, 'node.yaml', nodeManifest(NODE, NODE_IP, POD_CIDR));
  writeManifest(initial, 'web.yaml', list(webObjects()));
  writeManifest(initial, 'local.yaml', list(localObjects()));
  writeManifest(initial, 'sticky.yaml', list(simple('sticky', POD_NAMES, true)));
  writeManifest(initial, 'empty.yaml', list(simple('empty', [])));
  writeManifest(initial, 'drain.yaml', drainObjects(POD_NAMES));
  writeManifest(initial, 'gone.yaml', list(simple('gone', ['pod1'])));
  for (const p of POD_NAMES) writeManifest(dir, `drain-keep-${drainKeeps(p)}.yaml`, drainObjects([drainKeeps(p)]));
  writeManifest(dir, 'late.yaml', list(simple('late', ['pod2'])));
}
