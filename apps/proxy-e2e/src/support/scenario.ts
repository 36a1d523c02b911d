import { mkdirSync } from 'node:fs';
import type { SimulatedNode } from '@kube-proxy/testing-netns';
import { endpointSlice, nodeManifest, service, writeManifest, type EndpointSpec } from './manifests.js';

/**
 * The services the iptables datapath suite programs through the proxy. Pods pod1..pod3 (10.244.1.11-13)
 * run echo servers on TCP 8080 and UDP 5353. The client is 192.168.50.2 (and 192.168.50.3, a source
 * outside the LoadBalancer's allowed range); the node is 192.168.50.1.
 */
export const SVC = {
  web: { ip: '10.96.0.10', port: 80, nodePort: 30080 },
  webAff: { ip: '10.96.0.11', port: 80 },
  spread: { ip: '10.96.0.12', port: 80 },
  lb: { ip: '10.96.0.20', port: 80, nodePort: 30081, ingress: '203.0.113.10', allowedSource: '192.168.50.2', deniedSource: '192.168.50.3' },
  ext: { ip: '10.96.0.21', port: 80, externalIP: '203.0.113.20' },
  local: { ip: '10.96.0.22', port: 80, nodePort: 30082, healthCheckNodePort: 32082 },
  localNone: { ip: '10.96.0.23', port: 80, nodePort: 30083, healthCheckNodePort: 32083 },
  late: { ip: '10.96.0.30', port: 80 },
  dns: { ip: '10.96.0.53', port: 53 },
  noep: { ip: '10.96.0.99', port: 80, nodePort: 30099 },
} as const;

export const POD_TCP_PORT = 8080;
export const POD_UDP_PORT = 5353;
export const NODE_NAME = 'node-1';
export const OTHER_NODE = 'node-2';

const HTTP = [{ name: 'http', port: POD_TCP_PORT }] as const;

/** Endpoints for pods `pods` (1-based) of `node`, as seen on node `nodeName`. */
export function eps(node: SimulatedNode, pods: readonly number[], nodeName = NODE_NAME): EndpointSpec[] {
  return pods.map((i) => {
    const p = node.pods[i - 1];
    if (!p) throw new Error(`no pod${i}`);
    return { ip: p.ip, podName: p.name, nodeName };
  });
}

/** Writes the initial manifests (everything but `late`). */
export function writeInitialManifests(dir: string, node: SimulatedNode): void {
  mkdirSync(dir, { recursive: true });
  writeManifest(dir, 'node-1.yaml', nodeManifest(NODE_NAME, node.nodeIp, node.podCidr));

  const tcp = (name: string, port: number, nodePort?: number) => [
    { name: 'http', port, targetPort: POD_TCP_PORT, ...(nodePort !== undefined ? { nodePort } : {}) },
  ];

  writeManifest(dir, 'svc-web.yaml', service({ name: 'web', type: 'NodePort', clusterIP: SVC.web.ip, ports: tcp('http', 80, SVC.web.nodePort) }));
  writeManifest(dir, 'eps-web.yaml', endpointSlice({ service: 'web', ports: HTTP, endpoints: eps(node, [1, 2]) }));

  writeManifest(dir, 'svc-web-aff.yaml', service({ name: 'web-aff', clusterIP: SVC.webAff.ip, sessionAffinity: 'ClientIP', ports: tcp('http', 80) }));
  writeManifest(dir, 'eps-web-aff.yaml', endpointSlice({ service: 'web-aff', ports: HTTP, endpoints: eps(node, [1, 2, 3]) }));

  writeManifest(dir, 'svc-spread.yaml', service({ name: 'spread', clusterIP: SVC.spread.ip, ports: tcp('http', 80) }));
  writeManifest(dir, 'eps-spread.yaml', endpointSlice({ service: 'spread', ports: HTTP, endpoints: eps(node, [1, 2, 3]) }));

  writeManifest(
    dir,
    'svc-lb.yaml',
    service({
      name: 'lb',
      type: 'LoadBalancer',
      clusterIP: SVC.lb.ip,
      ports: tcp('http', 80, SVC.lb.nodePort),
      loadBalancerIngressIPs: [SVC.lb.ingress],
      loadBalancerSourceRanges: [`${SVC.lb.allowedSource}/32`],
    }),
  );
  writeManifest(dir, 'eps-lb.yaml', endpointSlice({ service: 'lb', ports: HTTP, endpoints: eps(node, [1, 2]) }));

  writeManifest(dir, 'svc-ext.yaml', service({ name: 'ext', clusterIP: SVC.ext.ip, externalIPs: [SVC.ext.externalIP], ports: tcp('http', 80) }));
  writeManifest(dir, 'eps-ext.yaml', endpointSlice({ service: 'ext', ports: HTTP, endpoints: eps(node, [3]) }));

  writeManifest(
    dir,
    'svc-local.yaml',
    service({
      name: 'local',
      type: 'NodePort',
      clusterIP: SVC.local.ip,
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: SVC.local.healthCheckNodePort,
      ports: tcp('http', 80, SVC.local.nodePort),
    }),
  );
  // pod1 is local; pod2 is (as far as the proxy knows) on another node.
  writeManifest(
    dir,
    'eps-local.yaml',
    endpointSlice({ service: 'local', ports: HTTP, endpoints: [...eps(node, [1]), ...eps(node, [2], OTHER_NODE)] }),
  );

  writeManifest(
    dir,
    'svc-local-none.yaml',
    service({
      name: 'local-none',
      type: 'NodePort',
      clusterIP: SVC.localNone.ip,
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: SVC.localNone.healthCheckNodePort,
      ports: tcp('http', 80, SVC.localNone.nodePort),
    }),
  );
  writeManifest(dir, 'eps-local-none.yaml', endpointSlice({ service: 'local-none', ports: HTTP, endpoints: eps(node, [2, 3], OTHER_NODE) }));

  writeManifest(
    dir,
    'svc-dns.yaml',
    service({ name: 'dns', clusterIP: SVC.dns.ip, ports: [{ name: 'dns', port: SVC.dns.port, targetPort: POD_UDP_PORT, protocol: 'UDP' }] }),
  );
  writeDnsSlice(dir, node, [1, 2]);

  // A service without any EndpointSlice.
  writeManifest(dir, 'svc-noep.yaml', service({ name: 'noep', type: 'NodePort', clusterIP: SVC.noep.ip, ports: tcp('http', 80, SVC.noep.nodePort) }));
}

/** (Re)writes the `dns` EndpointSlice with the given pods (1-based). */
export function writeDnsSlice(dir: string, node: SimulatedNode, pods: readonly number[]): void {
  writeManifest(
    dir,
    'eps-dns.yaml',
    endpointSlice({ service: 'dns', ports: [{ name: 'dns', port: POD_UDP_PORT, protocol: 'UDP' }], endpoints: eps(node, pods) }),
  );
}

/** Adds the `late` service (→ pod3) while the proxy runs. */
export function writeLateService(dir: string, node: SimulatedNode): void {
  writeManifest(dir, 'eps-late.yaml', endpointSlice({ service: 'late', ports: HTTP, endpoints: eps(node, [3]) }));
  writeManifest(dir, 'svc-late.yaml', service({ name: 'late', clusterIP: SVC.late.ip, ports: [{ name: 'http', port: 80, targetPort: POD_TCP_PORT }] }));
}
