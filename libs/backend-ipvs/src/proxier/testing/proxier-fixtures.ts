/* Test fixtures for the IPVS proxier specs (not part of the package API). */
import type { IPFamily, NetworkInterfaces, ProxyContext, V1EndpointSlice, V1Node, V1Service } from '@kube-proxy/core';
import type { StringSink, TestContextOverrides } from '@kube-proxy/core/testing';
import { DryRunIptables, InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { FakeClock, FakeCommandExecutor, RecordingLogger, settle, testContext } from '@kube-proxy/core/testing';
import type { IpvsConnections, IpvsKernel } from '../../kernel/ipvs-kernel.js';
import { MemoryIpvsKernel } from '../../kernel/memory-ipvs-kernel.js';
import type { VirtualServer } from '../../state/ipvs-state.js';
import { IpvsProxier } from '../ipvs-proxier.js';

export const NODE = 'node-1';
export const NODE_IP = '192.168.50.1';

/**
 * An IpvsKernel over the in-memory one that counts the writes that carry something, lets a spec
 * set connection counts, and can be told to fail the next ipvsadm batch.
 */
export class RecordingKernel implements IpvsKernel {
  readonly memory = new MemoryIpvsKernel();
  readonly writes: Array<{ tool: 'ipvsadm' | 'ipset' | 'ip'; text: string }> = [];
  reads = 0;
  connections = new Map<string, Map<string, { active: number; inactive: number }>>();
  failIpvsadm = 0;

  readVirtualServers(family: IPFamily): Promise<VirtualServer[]> {
    this.reads++;
    return this.memory.readVirtualServers(family);
  }
  async applyIpvsadm(batch: string): Promise<void> {
    if (batch === '') return;
    this.writes.push({ tool: 'ipvsadm', text: batch });
    if (this.failIpvsadm > 0) {
      this.failIpvsadm--;
      throw new Error('ipvsadm --restore: Memory allocation problem');
    }
    await this.memory.applyIpvsadm(batch);
  }
  readIpsets(): Promise<Map<string, string[]>> {
    return this.memory.readIpsets();
  }
  async applyIpset(script: string): Promise<void> {
    if (script === '') return;
    this.writes.push({ tool: 'ipset', text: script });
    await this.memory.applyIpset(script);
  }
  readBoundAddresses(family: IPFamily): Promise<string[] | null> {
    return this.memory.readBoundAddresses(family);
  }
  async applyLinkChanges(change: { readonly createLink: boolean; readonly add: readonly string[]; readonly remove: readonly string[] }): Promise<void> {
    if (!change.createLink && change.add.length === 0 && change.remove.length === 0) return;
    this.writes.push({ tool: 'ip', text: JSON.stringify(change) });
    await this.memory.applyLinkChanges(change);
  }
  async readConnections(): Promise<IpvsConnections> {
    return this.connections;
  }
  setConnections(vsKey: string, rsKey: string, active: number, inactive = 0): void {
    if (!this.connections.has(vsKey)) this.connections.set(vsKey, new Map());
    this.connections.get(vsKey)!.set(rsKey, { active, inactive });
  }
}

export interface Rig {
  readonly proxier: IpvsProxier;
  readonly kernel: RecordingKernel;
  readonly tables: InMemoryTables;
  readonly iptables: DryRunIptables;
  readonly clock: FakeClock;
  readonly logger: RecordingLogger;
  readonly context: ProxyContext & { dryRunSink: StringSink };
}

/** The machine a rig's real-run proxier sees: eth0 with the node IP. */
export const HOST_INTERFACES: NetworkInterfaces = () => ({
  eth0: [{ address: NODE_IP, family: 'IPv4', netmask: '255.255.255.0', internal: false, mac: '00:00:00:00:00:01', cidr: `${NODE_IP}/24` }],
});

export interface RigOptions {
  /** The proxier's family (default IPv4). */
  readonly family?: IPFamily;
  /** What os.networkInterfaces() returns (default HOST_INTERFACES). */
  readonly networkInterfaces?: NetworkInterfaces;
}

/** One proxier (IPv4 unless told) over a RecordingKernel and in-memory iptables; dryRun selects the --dry-run output. */
export function rig(overrides: TestContextOverrides = {}, kernel = new RecordingKernel(), options: RigOptions = {}): Rig {
  const { config, ...rest } = overrides;
  const family = options.family ?? 'IPv4';
  const context = testContext({
    nodeName: NODE,
    nodeIPs: { IPv4: NODE_IP },
    dryRun: true,
    ...rest,
    config: { clusterCIDR: '10.244.0.0/16', ...(config ?? {}) },
  });
  const tables = new InMemoryTables();
  const iptables = new DryRunIptables(family, tables);
  const clock = new FakeClock(1_700_000_000_000);
  const logger = new RecordingLogger();
  const proxier = new IpvsProxier({
    family,
    context,
    kernel,
    iptables,
    executor: new FakeCommandExecutor(),
    clock,
    logger,
    dryRunTables: tables,
    networkInterfaces: options.networkInterfaces ?? HOST_INTERFACES,
  });
  return { proxier, kernel, tables, iptables, clock, logger, context };
}

/** This rig's Node object (`node-1`) with the given status addresses. */
export function node(addresses: ReadonlyArray<{ type: string; address: string }>, name = NODE): V1Node {
  return { metadata: { name }, status: { addresses: [...addresses] } } as V1Node;
}

export function service(name: string, clusterIP: string, spec: Record<string, unknown> = {}): V1Service {
  return {
    metadata: { namespace: 'ns1', name },
    spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 as never }], ...spec },
  } as V1Service;
}

export function slice(svc: string, ips: readonly string[], protocol = 'TCP', port = 8080): V1EndpointSlice {
  return {
    metadata: { namespace: 'ns1', name: `${svc}-abc`, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port, protocol }],
    endpoints: ips.map((ip) => ({ addresses: [ip], nodeName: 'node-2', conditions: { ready: true } })),
  } as V1EndpointSlice;
}

/** Feeds the initial lists and marks every source synced. */
export function start(r: Rig, services: readonly V1Service[], slices: readonly V1EndpointSlice[]): void {
  for (const s of services) r.proxier.onServiceAdd(s);
  for (const s of slices) r.proxier.onEndpointSliceAdd(s);
  r.proxier.onServicesSynced();
  r.proxier.onEndpointSlicesSynced();
}

/** An IPv6 NodePort Service (port 80 → 8080, node port 30080). */
export function service6(name: string, clusterIP: string, protocol = 'TCP'): V1Service {
  return service(name, clusterIP, { type: 'NodePort', ipFamilies: ['IPv6'], ports: [{ name: 'http', port: 80, protocol, targetPort: 8080, nodePort: 30080 }] });
}

export function slice6(svc: string, ips: readonly string[], protocol = 'TCP'): V1EndpointSlice {
  return { ...slice(svc, ips, protocol), addressType: 'IPv6' };
}

/** Starts the rig's sync loop, lets the first sync run, and lists the virtual servers of its family. */
export async function firstSyncServers(r: Rig): Promise<string[]> {
  void r.proxier.syncLoop();
  await settle();
  return (await r.kernel.memory.readVirtualServers(r.proxier.family)).map((vs) => vs.key);
}
