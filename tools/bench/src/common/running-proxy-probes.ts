/**
 * What the running-proxy measurement (running-proxy-memory.ts) needs to know of a proxy mode: how to
 * prepare the node for it, how to tell that the first full sync's rules are in the kernel, and what
 * the kernel tool's apply of the same rules costs. Everything runs inside the simulated node's
 * namespaces; commands are argument arrays.
 */
import { iptables, iptablesSave, type SimulatedNode } from '@kube-proxy/testing-netns';
import { CLUSTER_POLICY_PREFIX, servicePortNameBase } from '@kube-proxy/backend-nftables/internal';
import { legacyRestoreMs } from './legacy-restore-yardstick.js';

export type RunningProxyMode = 'iptables' | 'nftables';

export interface KernelProbe {
  readonly mode: RunningProxyMode;
  /** Before the proxy starts (iptables: kubelet's hint chain in the legacy tables selects iptables-legacy). */
  prepare(node: SimulatedNode): Promise<void>;
  /** True once both addresses are served by the kernel's rules. */
  applied(node: SimulatedNode, firstIP: string, lastIP: string): Promise<boolean>;
  /** The kernel tool's apply of what the proxy wrote, into an empty namespace; undefined when not measured. */
  kernelApplyMs(node: SimulatedNode, tag: string): Promise<number | undefined>;
  /** A size figure of what the proxy wrote (iptables: nat lines; nftables: cluster-ips elements). */
  size(node: SimulatedNode): Promise<number>;
  /** True once the kernel sends the Service's (port `http`, TCP) traffic to `endpoint` (ip:port) too. */
  endpointServed(node: SimulatedNode, service: { namespace: string; name: string }, endpoint: string): Promise<boolean>;
}

/** `ip` as a whole element of an nft set listing (10.96.0.1 must not match 10.96.0.10). */
export function listsAddress(listing: string, ip: string): boolean {
  const at = (from: number): number => listing.indexOf(ip, from);
  for (let i = at(0); i >= 0; i = at(i + 1)) {
    const before = listing[i - 1];
    const after = listing[i + ip.length];
    if ((before === ' ' || before === '{' || before === '\t' || before === '\n') && (after === ',' || after === ' ' || after === '}' || after === '\n')) return true;
  }
  return false;
}

const iptablesProbe: KernelProbe = {
  mode: 'iptables',
  prepare: async (node) => void (await iptables(node, node.ns.node, 'legacy', ['-t', 'mangle', '-N', 'KUBE-IPTABLES-HINT'])),
  applied: async (node, first, last) => {
    const nat = await iptablesSave(node, node.ns.node, 'legacy', 'nat');
    return nat.includes(`-d ${last}/32`) && nat.includes(`-d ${first}/32`);
  },
  kernelApplyMs: async (node, tag) => {
    // Less the one nfacct match (its counter object exists only in the node's namespace): one rule of 70,000.
    const filter = await iptablesSave(node, node.ns.node, 'legacy', 'filter');
    const nat = await iptablesSave(node, node.ns.node, 'legacy', 'nat');
    const tables = `${filter}${nat}`.replace(/ -m nfacct --nfacct-name +\S+/g, '');
    return legacyRestoreMs(Buffer.from(tables, 'latin1'), 3, tag);
  },
  size: async (node) => (await iptablesSave(node, node.ns.node, 'legacy', 'nat')).split('\n').length,
  endpointServed: async (node, _service, endpoint) => (await iptablesSave(node, node.ns.node, 'legacy', 'nat')).includes(`--to-destination ${endpoint}`),
};

async function clusterIPsListing(node: SimulatedNode): Promise<string> {
  // Before the first transaction the table does not exist: nft fails, which reads as "not yet".
  const r = await node.exec(node.ns.node, 'nft', ['list', 'set', 'ip', 'kube-proxy', 'cluster-ips'], { allowFailure: true, timeoutMs: 60_000 });
  return r.code === 0 ? r.stdout : '';
}

/**
 * nftables: a cold start writes every element in its last transaction (cold-start.ts), so both
 * addresses in cluster-ips means every service's rules are in the kernel. No kernel yardstick here:
 * the nftables bench measures the floor of the very same transactions in-process.
 */
const nftablesProbe: KernelProbe = {
  mode: 'nftables',
  prepare: async () => undefined,
  applied: async (node, first, last) => {
    const listing = await clusterIPsListing(node);
    return listsAddress(listing, last) && listsAddress(listing, first);
  },
  kernelApplyMs: async () => undefined,
  size: async (node) => (await clusterIPsListing(node)).split(',').length,
  endpointServed: async (node, service, endpoint) => {
    // The service chain: `dnat to IP:PORT` for one endpoint, a numgen map of `IP . PORT` for several.
    const chain = CLUSTER_POLICY_PREFIX + servicePortNameBase({ namespace: service.namespace, name: service.name, port: 'http', protocol: 'TCP', key: `${service.namespace}/${service.name}:http` });
    const r = await node.exec(node.ns.node, 'nft', ['list', 'chain', 'ip', 'kube-proxy', chain], { allowFailure: true, timeoutMs: 300_000 });
    const colon = endpoint.lastIndexOf(':');
    return r.code === 0 && (r.stdout.includes(`dnat to ${endpoint}`) || r.stdout.includes(`${endpoint.slice(0, colon)} . ${endpoint.slice(colon + 1)}`));
  },
};

export function kernelProbe(mode: RunningProxyMode): KernelProbe {
  return mode === 'nftables' ? nftablesProbe : iptablesProbe;
}
