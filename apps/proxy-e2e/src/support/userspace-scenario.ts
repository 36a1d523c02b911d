import { mkdirSync } from 'node:fs';
import type { SimulatedNode } from '@kube-proxy/testing-netns';
import { endpointSlice, nodeManifest, removeManifest, service, writeManifest, type ServiceSpec } from './manifests.js';
import { NODE_NAME, POD_TCP_PORT, POD_UDP_PORT, SVC, eps, writeDnsSlice } from './scenario.js';

/**
 * The services the userspace datapath suite programs through `--proxy-mode=userspace`. Same pods and
 * addresses as the iptables suite (scenario.ts; the IPs of web, web-aff, spread, ext, lb and dns are
 * reused), plus `stream` (long transfers, served by libs/testing/netns/src/userspace-stream.mjs on pod1/pod2)
 * and `failover` (one endpoint refuses: pod3 runs no stream server).
 */
export const STREAM_POD_PORT = 8090;
/** Pods that run the stream server (pod3 does not, so connections to pod3:8090 are refused). */
export const STREAM_PODS = [1, 2] as const;

export interface UserspaceService {
  readonly name: string;
  /** `namespace/name:portName`: the key the proxy sorts by when it allocates proxy ports. */
  readonly key: string;
  readonly ip: string;
  readonly port: number;
  readonly proto: 'tcp' | 'udp';
  readonly targetPort: number;
  readonly nodePort?: number;
  /** Extra captured addresses: external IPs and LoadBalancer ingress IPs. */
  readonly extraIPs: readonly string[];
  /** Initial endpoints (1-based pod numbers). */
  readonly pods: readonly number[];
  readonly spec: Omit<ServiceSpec, 'name' | 'clusterIP' | 'ports'>;
}

function svc(
  name: string,
  o: { ip: string; port: number; proto?: 'tcp' | 'udp'; portName?: string; targetPort?: number; nodePort?: number; extraIPs?: string[]; pods: number[] },
  spec: UserspaceService['spec'] = {},
): UserspaceService {
  const portName = o.portName ?? 'http';
  return {
    name,
    key: `default/${name}:${portName}`,
    ip: o.ip,
    port: o.port,
    proto: o.proto ?? 'tcp',
    targetPort: o.targetPort ?? (o.proto === 'udp' ? POD_UDP_PORT : POD_TCP_PORT),
    ...(o.nodePort !== undefined ? { nodePort: o.nodePort } : {}),
    extraIPs: o.extraIPs ?? [],
    pods: o.pods,
    spec,
  };
}

export const USVC = {
  web: svc('web', { ip: SVC.web.ip, port: SVC.web.port, nodePort: SVC.web.nodePort, pods: [1, 2] }, { type: 'NodePort' }),
  webAff: svc('web-aff', { ip: SVC.webAff.ip, port: SVC.webAff.port, pods: [1, 2, 3] }, { sessionAffinity: 'ClientIP' }),
  spread: svc('spread', { ip: SVC.spread.ip, port: SVC.spread.port, pods: [1, 2, 3] }),
  dns: svc('dns', { ip: SVC.dns.ip, port: SVC.dns.port, proto: 'udp', portName: 'dns', pods: [1, 2] }),
  ext: svc('ext', { ip: SVC.ext.ip, port: SVC.ext.port, extraIPs: [SVC.ext.externalIP], pods: [3] }, { externalIPs: [SVC.ext.externalIP] }),
  lb: svc(
    'lb',
    { ip: SVC.lb.ip, port: SVC.lb.port, nodePort: SVC.lb.nodePort, extraIPs: [SVC.lb.ingress], pods: [1, 2] },
    { type: 'LoadBalancer', loadBalancerIngressIPs: [SVC.lb.ingress] },
  ),
  stream: svc('stream', { ip: '10.96.0.40', port: 9000, portName: 'stream', targetPort: STREAM_POD_PORT, pods: [...STREAM_PODS] }),
  /** pod2 serves, pod3 refuses (nothing listens on its :8090). */
  failover: svc('failover', { ip: '10.96.0.41', port: 80, targetPort: STREAM_POD_PORT, pods: [2, 3] }),
} as const;

export const USERSPACE_SERVICES: readonly UserspaceService[] = Object.values(USVC);

/** Writes the Node and every service of {@link USVC} with its EndpointSlice. */
export function writeUserspaceManifests(dir: string, node: SimulatedNode): void {
  mkdirSync(dir, { recursive: true });
  writeManifest(dir, 'node-1.yaml', nodeManifest(NODE_NAME, node.nodeIp, node.podCidr));
  for (const s of USERSPACE_SERVICES) {
    const portName = s.key.slice(s.key.lastIndexOf(':') + 1);
    writeManifest(
      dir,
      `svc-${s.name}.yaml`,
      service({
        name: s.name,
        clusterIP: s.ip,
        ports: [
          {
            name: portName,
            port: s.port,
            targetPort: s.targetPort,
            protocol: s.proto === 'udp' ? 'UDP' : 'TCP',
            ...(s.nodePort !== undefined ? { nodePort: s.nodePort } : {}),
          },
        ],
        ...s.spec,
      }),
    );
    writeUserspaceSlice(dir, node, s, s.pods);
  }
}

/** (Re)writes the EndpointSlice of `s` with the given pods (1-based). */
export function writeUserspaceSlice(dir: string, node: SimulatedNode, s: UserspaceService, pods: readonly number[]): void {
  if (s.name === 'dns') return writeDnsSlice(dir, node, pods);
  const portName = s.key.slice(s.key.lastIndexOf(':') + 1);
  writeManifest(
    dir,
    `eps-${s.name}.yaml`,
    endpointSlice({
      service: s.name,
      ports: [{ name: portName, port: s.targetPort, protocol: s.proto === 'udp' ? 'UDP' : 'TCP' }],
      endpoints: eps(node, pods),
    }),
  );
}

/** Deletes the Service and its EndpointSlice manifests. */
export function removeUserspaceService(dir: string, s: UserspaceService): void {
  removeManifest(dir, `svc-${s.name}.yaml`);
  removeManifest(dir, `eps-${s.name}.yaml`);
}

/**
 * The proxy ports the contract predicts for a fresh start: service ports in sorted order of their key
 * (`namespace/name:portName`, plain code-unit order), each taking the lowest free port of the range.
 * `perProtocol`: a port is free when no socket *of the same protocol* holds it (the backend's
 * ProxyPortAllocator: a TCP and a UDP proxy socket may share a number); otherwise one pool for all
 * protocols (upstream's userspace PortAllocator).
 */
export function expectedProxyPorts(
  first: number,
  o: { perProtocol: boolean },
  services: readonly UserspaceService[] = USERSPACE_SERVICES,
): Map<string, number> {
  const sorted = [...services].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const next: Record<string, number> = {};
  const res = new Map<string, number>();
  for (const s of sorted) {
    const pool = o.perProtocol ? s.proto : 'all';
    const port = next[pool] ?? first;
    next[pool] = port + 1;
    res.set(s.key, port);
  }
  return res;
}

/** Capture-chain jumps from the built-in chains that are missing in a full `iptables-save` dump. */
export function missingJumps(dump: string): string[] {
  const lines = dump.split('\n');
  const want = [
    { from: 'PREROUTING', to: 'KUBE-PORTALS-CONTAINER', localOnly: false },
    { from: 'OUTPUT', to: 'KUBE-PORTALS-HOST', localOnly: false },
    { from: 'PREROUTING', to: 'KUBE-NODEPORT-CONTAINER', localOnly: true },
    { from: 'OUTPUT', to: 'KUBE-NODEPORT-HOST', localOnly: true },
    { from: 'INPUT', to: 'KUBE-NODEPORT-NON-LOCAL', localOnly: false },
  ];
  return want
    .filter(
      (j) => !lines.some((l) => l.startsWith(`-A ${j.from} `) && l.endsWith(`-j ${j.to}`) && (!j.localOnly || l.includes('-m addrtype --dst-type LOCAL'))),
    )
    .map((j) => `${j.from} → ${j.to}${j.localOnly ? ' (-m addrtype --dst-type LOCAL)' : ''}`);
}

/** One capture rule found in an `iptables-save` dump. */
export interface CaptureRule {
  readonly line: string;
  readonly target: 'REDIRECT' | 'DNAT' | 'ACCEPT' | string;
  /** Where the rule sends the packet: the REDIRECT port or the DNAT destination's port. */
  readonly toPort?: number;
  /** DNAT destination address. */
  readonly toAddr?: string;
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Rules `-A <chain>` of a dump matching protocol, destination port and (when given) destination
 * address, parsed for their REDIRECT / DNAT target. Tolerant of option order and extra matches.
 */
export function captureRules(dump: string, chain: string, m: { proto: 'tcp' | 'udp'; dport: number; dst?: string }): CaptureRule[] {
  const res: CaptureRule[] = [];
  for (const line of dump.split('\n')) {
    if (!line.startsWith(`-A ${chain} `)) continue;
    if (!new RegExp(`(^| )-p ${m.proto}( |$)`).test(line)) continue;
    if (!new RegExp(` --dport ${m.dport}( |$)`).test(line)) continue;
    if (m.dst !== undefined && !new RegExp(` -d ${esc(m.dst)}(/32)?( |$)`).test(line)) continue;
    const target = / -j (\S+)/.exec(line)?.[1] ?? '';
    const redirect = / --to-ports (\d+)/.exec(line);
    const dnat = / --to-destination ([0-9.]+):(\d+)/.exec(line);
    res.push({
      line,
      target,
      ...(redirect ? { toPort: Number(redirect[1]) } : dnat ? { toPort: Number(dnat[2]), toAddr: dnat[1] } : {}),
    });
  }
  return res;
}

/** Every rule line of a dump that mentions `addr` as a destination (`-d addr/32`). */
export function rulesForDestination(dump: string, addr: string): string[] {
  const re = new RegExp(` -d ${esc(addr)}(/32)?( |$)`);
  return dump.split('\n').filter((l) => l.startsWith('-A ') && re.test(l));
}

/** Listening TCP ports and bound UDP ports in `ss -H -l -n -t -u` output: `tcp/20001`, `udp/20000`. */
export function listeningPorts(ssOutput: string): Set<string> {
  const res = new Set<string>();
  for (const line of ssOutput.split('\n')) {
    const m = /^(tcp|udp)\s+\S+\s+\d+\s+\d+\s+(\S+):(\d+)\s/.exec(line.trim() + ' ');
    if (m) res.add(`${m[1]}/${m[3]}`);
  }
  return res;
}
