import { spawn as spawnChild, type ChildProcess, type StdioOptions } from 'node:child_process';
import { idle, mergeEnv, run, type CommandResult, type RunOptions } from './exec.js';
import { scriptPath } from './scripts.js';

/**
 * A simulated Kubernetes node built from network namespaces (docs/datapath-testing.md):
 *
 * ```
 * <p>-client eth0 192.168.50.2/24 ──veth── <p>up 192.168.50.1/24  <p>-node (ip_forward=1, br_nf=1)
 *                                                               <p>br 10.244.1.1/24 (bridge)
 * <p>-pod1 eth0 10.244.1.11 ──veth <p>v1 (hairpin on)──┐
 * <p>-pod2 eth0 10.244.1.12 ──veth <p>v2 (hairpin on)──┼── <p>br     pods: default via 10.244.1.1
 * <p>-pod3 eth0 10.244.1.13 ──veth <p>v3 (hairpin on)──┘
 * ```
 *
 * The client routes the service range (and the "external" ranges used for LoadBalancer / external IPs)
 * via the node; the node's default route points into the client, whose `ip_forward` stays 0, so nothing
 * ever leaves the namespaces. Every link is created directly inside its namespaces, so nothing appears
 * in the root namespace, and no root-namespace rule, sysctl or link is touched.
 */
export interface SimulatedNodeOptions {
  /**
   * Unique prefix for namespace and interface names: `[a-z][a-z0-9]{1,11}`. Namespaces are
   * `<prefix>-node`, `<prefix>-client`, `<prefix>-podN`; node-side interfaces `<prefix>br`, `<prefix>up`,
   * `<prefix>vN` (so at most 15 characters).
   */
  readonly prefix: string;
  /** Number of pods (1–9). Default 3. */
  readonly podCount?: number;
  /** Add IPv6 addresses and routes too (fd00:10:244:1::/64 pods, fd00:192:168:50::/64 uplink). Default false. */
  readonly ipv6?: boolean;
  /** Extra IPv4 addresses (with prefix length) for the client's eth0, e.g. a second source for firewall tests. */
  readonly clientExtraAddresses?: readonly string[];
  /** Destinations the client routes via the node. Default: the service range and 203.0.113.0/24. */
  readonly clientRoutes?: readonly string[];
  /** Environment for every command this node runs (e.g. `XTABLES_LOCKFILE`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface PodInfo {
  /** Pod name as the echo servers report it: `pod1`, `pod2`, ... */
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
  readonly ip6?: string;
  /** The node-side veth (a bridge port). */
  readonly hostVeth: string;
}

export interface SpawnOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly stdio?: StdioOptions;
  /** Put the child in its own process group so that {@link SimulatedNode.destroy} can end it with its children. */
  readonly detached?: boolean;
  /**
   * Run the command under `watchdog.mjs` with this maximum lifetime (seconds): the watchdog ends the
   * command's whole process group when our process goes away (even SIGKILLed: its stdin closes), when
   * it gets SIGTERM, or when the lifetime is over. Use it for anything that would not exit by itself,
   * e.g. the proxy. stdin of the returned child is the watchdog's and must stay open.
   */
  readonly watchdogLifetimeS?: number;
}

export interface SimulatedNode {
  readonly prefix: string;
  readonly ns: { readonly node: string; readonly client: string; readonly pods: readonly string[] };
  /** Every namespace this node owns (exactly the ones `destroy()` deletes). */
  readonly namespaces: readonly string[];
  readonly pods: readonly PodInfo[];
  readonly bridge: string;
  readonly bridgeIp: string;
  readonly uplink: string;
  readonly nodeIp: string;
  readonly clientIp: string;
  readonly podCidr: string;
  readonly clusterCidr: string;
  readonly serviceCidr: string;
  readonly ipv6: boolean;
  readonly nodeIp6?: string;
  readonly clientIp6?: string;
  readonly bridgeIp6?: string;
  /** Runs `cmd args` inside namespace `ns` (`ip netns exec`), bounded (default 30 s). */
  exec(ns: string, cmd: string, args: readonly string[], opts?: RunOptions): Promise<CommandResult>;
  /** Starts a long-running `cmd args` inside `ns`. The child is tracked and ended by `destroy()`. */
  spawn(ns: string, cmd: string, args: readonly string[], opts?: SpawnOptions): ChildProcess;
  /** Reads a sysctl inside `ns` (e.g. `net.ipv4.ip_forward`). */
  sysctl(ns: string, key: string): Promise<string>;
  /** Ends every tracked child and deletes exactly this node's namespaces. Idempotent. */
  destroy(): Promise<void>;
}

const PREFIX_RE = /^[a-z][a-z0-9]{1,11}$/;
const ROLE_RE = /^(node|client|pod[1-9])$/;

export const NODE_IP = '192.168.50.1';
export const CLIENT_IP = '192.168.50.2';
export const BRIDGE_IP = '10.244.1.1';
export const POD_CIDR = '10.244.1.0/24';
export const CLUSTER_CIDR = '10.244.0.0/16';
export const SERVICE_CIDR = '10.96.0.0/12';
/** TEST-NET-3: routed from the client via the node; used for LoadBalancer ingress IPs and external IPs. */
export const EXTERNAL_CIDR = '203.0.113.0/24';

const NODE_IP6 = 'fd00:192:168:50::1';
const CLIENT_IP6 = 'fd00:192:168:50::2';
const BRIDGE_IP6 = 'fd00:10:244:1::1';
const SERVICE_CIDR6 = 'fd00:10:96::/112';

export function namespaceNames(prefix: string, podCount = 3): { node: string; client: string; pods: string[] } {
  return {
    node: `${prefix}-node`,
    client: `${prefix}-client`,
    pods: Array.from({ length: podCount }, (_, i) => `${prefix}-pod${i + 1}`),
  };
}

/** Lists the network namespaces known to `ip netns`. */
export async function listNamespaces(): Promise<string[]> {
  const r = await run('ip', ['netns', 'list'], { timeoutMs: 10_000 });
  // Lines look like `name` or `name (id: 3)`.
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n.length > 0);
}

/** Deletes leftover namespaces of exactly this prefix (`<prefix>-node|client|podN`). Returns what it deleted. */
export async function cleanupPrefix(prefix: string): Promise<string[]> {
  assertPrefix(prefix);
  const deleted: string[] = [];
  for (const name of await listNamespaces()) {
    if (!name.startsWith(`${prefix}-`) || !ROLE_RE.test(name.slice(prefix.length + 1))) continue;
    await deleteNamespace(name);
    deleted.push(name);
  }
  return deleted;
}

/**
 * A run-unique prefix `<tag><pid>`: parallel runs (different processes) never collide, and leftovers of
 * dead runs can be recognised by {@link cleanupStaleRuns}. `tag` is 2–5 lowercase letters.
 */
export function runPrefix(tag: string, pid = process.pid): string {
  if (!/^[a-z]{2,5}$/.test(tag)) throw new Error(`bad tag ${JSON.stringify(tag)}: want 2-5 lowercase letters`);
  const prefix = `${tag}${pid}`;
  assertPrefix(prefix);
  return prefix;
}

/**
 * Deletes namespaces left by earlier runs with this tag whose process is gone (or is this process):
 * exactly `<tag><pid>-(node|client|podN)`. Namespaces of live concurrent runs are left alone.
 */
export async function cleanupStaleRuns(tag: string): Promise<string[]> {
  const re = new RegExp(`^${tag}(\\d+)-(node|client|pod[1-9])$`);
  const deleted: string[] = [];
  for (const name of await listNamespaces()) {
    const m = re.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && processAlive(pid)) continue;
    await deleteNamespace(name);
    deleted.push(name);
  }
  return deleted;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Deletes a namespace of ours. Processes still inside it (e.g. a proxy left behind by a killed test run)
 * are ended first, by the exact pids `ip netns pids` reports for that namespace: a netns whose name is
 * deleted stays alive as long as a process is in it.
 */
async function deleteNamespace(name: string, killProcesses = true): Promise<void> {
  if (killProcesses) {
    const r = await run('ip', ['netns', 'pids', name], { allowFailure: true, timeoutMs: 10_000 });
    const pids = r.stdout
      .split(/\s+/)
      .map(Number)
      .filter((x) => Number.isInteger(x) && x > 1 && x !== process.pid);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  await run('ip', ['netns', 'del', name], { allowFailure: true, timeoutMs: 10_000 });
}

function assertPrefix(prefix: string): void {
  if (!PREFIX_RE.test(prefix)) {
    throw new Error(`bad prefix ${JSON.stringify(prefix)}: want [a-z][a-z0-9]{1,11} (interface names must stay <= 15 chars)`);
  }
}

/** Builds the simulated node. On any failure it deletes what it created and rethrows. */
export async function createSimulatedNode(opts: SimulatedNodeOptions): Promise<SimulatedNode> {
  const { prefix } = opts;
  assertPrefix(prefix);
  const podCount = opts.podCount ?? 3;
  if (!Number.isInteger(podCount) || podCount < 1 || podCount > 9) throw new Error(`podCount must be 1..9, got ${podCount}`);
  const ipv6 = opts.ipv6 ?? false;
  const names = namespaceNames(prefix, podCount);
  const namespaces = [names.node, names.client, ...names.pods];
  const existing = new Set(await listNamespaces());
  const clash = namespaces.filter((n) => existing.has(n));
  if (clash.length > 0) throw new Error(`namespaces already exist: ${clash.join(', ')} (run cleanupPrefix first)`);

  const bridge = `${prefix}br`;
  const uplink = `${prefix}up`;
  const env = opts.env;
  const children = new Set<ChildProcess>();
  const created: string[] = [];
  let destroyed = false;

  const nsExec = (ns: string, cmd: string, args: readonly string[], o: RunOptions = {}): Promise<CommandResult> =>
    run('ip', ['netns', 'exec', ns, cmd, ...args], { ...o, env: { ...env, ...o.env } });
  const w: Wiring = {
    ip: (args) => run('ip', args, { env, timeoutMs: 15_000 }),
    setSysctl: (ns, key, value) => nsExec(ns, 'sysctl', ['-q', '-w', `${key}=${value}`]),
    node: names.node,
    client: names.client,
    bridge,
    uplink,
    ipv6,
  };

  const pods = podsOf(prefix, names.pods, ipv6);

  const destroy = async (): Promise<void> => {
    if (destroyed) return;
    destroyed = true;
    await Promise.all([...children].map((c) => endChild(c)));
    children.clear();
    for (const ns of [...created].reverse()) await deleteNamespace(ns);
  };

  function assertOwned(ns: string): void {
    if (!namespaces.includes(ns)) throw new Error(`namespace ${ns} is not part of simulated node ${prefix}`);
  }

  const node: SimulatedNode = {
    ...nodeLayout(w, prefix, namespaces, pods, names.pods),
    exec: (ns, cmd, args, o) => {
      assertOwned(ns);
      return nsExec(ns, cmd, args, o);
    },
    spawn: (ns, cmd, args, o = {}) => {
      assertOwned(ns);
      if (destroyed) throw new Error('node already destroyed');
      return spawnTracked(ns, cmd, args, o, env, children);
    },
    sysctl: async (ns, key) => {
      assertOwned(ns);
      return (await nsExec(ns, 'sysctl', ['-n', key])).stdout.trim();
    },
    destroy,
  };

  try {
    await addNamespaces(w, namespaces, created);
    await wireBridge(w);
    await wirePods(w, pods);
    await wireUplink(w, opts.clientExtraAddresses ?? []);
    await wireRoutes(w, opts.clientRoutes ?? [SERVICE_CIDR, EXTERNAL_CIDR]);
    await setForwarding(w);
    return node;
  } catch (e) {
    await destroy();
    throw e;
  }
}

/** The pods' names, namespaces, addresses and node-side veths: pod N is 10.244.1.(10+N). */
function podsOf(prefix: string, podNamespaces: readonly string[], ipv6: boolean): PodInfo[] {
  return podNamespaces.map((ns, i) => ({
    name: `pod${i + 1}`,
    ns,
    ip: `10.244.1.${11 + i}`,
    ...(ipv6 ? { ip6: `fd00:10:244:1::${11 + i}` } : {}),
    hostVeth: `${prefix}v${i + 1}`,
  }));
}

/** The fixed facts of a simulated node: its namespaces, interfaces and addresses. */
function nodeLayout(
  w: Wiring,
  prefix: string,
  namespaces: readonly string[],
  pods: readonly PodInfo[],
  podNamespaces: readonly string[],
): Omit<SimulatedNode, 'exec' | 'spawn' | 'sysctl' | 'destroy'> {
  return {
    prefix,
    ns: { node: w.node, client: w.client, pods: podNamespaces },
    namespaces,
    pods,
    bridge: w.bridge,
    bridgeIp: BRIDGE_IP,
    uplink: w.uplink,
    nodeIp: NODE_IP,
    clientIp: CLIENT_IP,
    podCidr: POD_CIDR,
    clusterCidr: CLUSTER_CIDR,
    serviceCidr: SERVICE_CIDR,
    ipv6: w.ipv6,
    ...(w.ipv6 ? { nodeIp6: NODE_IP6, clientIp6: CLIENT_IP6, bridgeIp6: BRIDGE_IP6 } : {}),
  };
}

/** What the wiring steps of createSimulatedNode share: how to run `ip` and sysctls, and the node's names. */
interface Wiring {
  readonly ip: (args: readonly string[]) => Promise<CommandResult>;
  readonly setSysctl: (ns: string, key: string, value: string) => Promise<CommandResult>;
  /** The node's and the client's namespaces. */
  readonly node: string;
  readonly client: string;
  readonly bridge: string;
  readonly uplink: string;
  readonly ipv6: boolean;
}

/** `cmd args` in `ns` (under the watchdog when asked), tracked in `children` until it exits. */
function spawnTracked(
  ns: string,
  cmd: string,
  args: readonly string[],
  o: SpawnOptions,
  env: SimulatedNodeOptions['env'],
  children: Set<ChildProcess>,
): ChildProcess {
  const nsArgs = ['netns', 'exec', ns, cmd, ...args];
  const watchdog = o.watchdogLifetimeS !== undefined;
  const stdio: StdioOptions = o.stdio ?? ['pipe', 'pipe', 'pipe'];
  const child = watchdog
    ? spawnChild(process.execPath, [scriptPath('watchdog.mjs'), String(o.watchdogLifetimeS), 'ip', ...nsArgs], {
        stdio: Array.isArray(stdio) ? ['pipe', ...stdio.slice(1)] : ['pipe', stdio, stdio],
        env: mergeEnv({ ...env, ...o.env }),
        detached: o.detached ?? false,
      })
    : spawnChild('ip', nsArgs, {
        stdio,
        env: mergeEnv({ ...env, ...o.env }),
        detached: o.detached ?? false,
      });
  child.stdin?.on('error', () => undefined);
  children.add(child);
  child.on('exit', () => children.delete(child));
  child.on('error', () => children.delete(child));
  return child;
}

/** Creates each namespace (recorded in `created` at once, so a failure deletes it) with its loopback up. */
async function addNamespaces(w: Wiring, namespaces: readonly string[], created: string[]): Promise<void> {
  for (const ns of namespaces) {
    await w.ip(['netns', 'add', ns]);
    created.push(ns);
    await w.ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    // No duplicate address detection: link-local addresses would stay tentative for ~1-2 s and lose
    // the first packets of a test.
    if (w.ipv6) {
      await w.setSysctl(ns, 'net.ipv6.conf.all.accept_dad', '0');
      await w.setSysctl(ns, 'net.ipv6.conf.default.accept_dad', '0');
    }
  }
}

/** The node's bridge for the pod network. */
async function wireBridge(w: Wiring): Promise<void> {
  const { ip, node: N, bridge } = w;
  // No multicast snooping: IPv6 neighbour discovery must not depend on MLD reports.
  await ip(['-n', N, 'link', 'add', bridge, 'type', 'bridge', 'mcast_snooping', '0']);
  await ip(['-n', N, 'addr', 'add', `${BRIDGE_IP}/24`, 'dev', bridge]);
  if (w.ipv6) await ip(['-n', N, 'addr', 'add', `${BRIDGE_IP6}/64`, 'dev', bridge, 'nodad']);
  await ip(['-n', N, 'link', 'set', bridge, 'up']);
}

/** Pods: veth pairs created directly between the node and the pod namespace. */
async function wirePods(w: Wiring, pods: readonly PodInfo[]): Promise<void> {
  const { ip, node: N, bridge } = w;
  for (const pod of pods) {
    await ip(['link', 'add', pod.hostVeth, 'netns', N, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod.ns]);
    await ip(['-n', N, 'link', 'set', pod.hostVeth, 'master', bridge]);
    // kubelet hairpin-veth / CNI hairpinMode: with br_netfilter on, DNAT back into the same port is bridged.
    await ip(['-n', N, 'link', 'set', pod.hostVeth, 'type', 'bridge_slave', 'hairpin', 'on']);
    await ip(['-n', N, 'link', 'set', pod.hostVeth, 'up']);
    await ip(['-n', pod.ns, 'addr', 'add', `${pod.ip}/24`, 'dev', 'eth0']);
    if (pod.ip6) await ip(['-n', pod.ns, 'addr', 'add', `${pod.ip6}/64`, 'dev', 'eth0', 'nodad']);
    await ip(['-n', pod.ns, 'link', 'set', 'eth0', 'up']);
    await ip(['-n', pod.ns, 'route', 'add', 'default', 'via', BRIDGE_IP]);
    if (w.ipv6) await ip(['-n', pod.ns, '-6', 'route', 'add', 'default', 'via', BRIDGE_IP6]);
  }
}

/** The uplink between the node and the client. */
async function wireUplink(w: Wiring, clientExtraAddresses: readonly string[]): Promise<void> {
  const { ip, node: N, client: C, uplink } = w;
  await ip(['link', 'add', uplink, 'netns', N, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', C]);
  await ip(['-n', N, 'addr', 'add', `${NODE_IP}/24`, 'dev', uplink]);
  await ip(['-n', C, 'addr', 'add', `${CLIENT_IP}/24`, 'dev', 'eth0']);
  for (const a of clientExtraAddresses) await ip(['-n', C, 'addr', 'add', a, 'dev', 'eth0']);
  if (w.ipv6) {
    await ip(['-n', N, 'addr', 'add', `${NODE_IP6}/64`, 'dev', uplink, 'nodad']);
    await ip(['-n', C, 'addr', 'add', `${CLIENT_IP6}/64`, 'dev', 'eth0', 'nodad']);
  }
  await ip(['-n', N, 'link', 'set', uplink, 'up']);
  await ip(['-n', C, 'link', 'set', 'eth0', 'up']);
}

/** The client reaches ClusterIPs / external ranges / pods via the node (an off-cluster machine on the node's LAN). */
async function wireRoutes(w: Wiring, clientRoutes: readonly string[]): Promise<void> {
  const { ip, node: N, client: C } = w;
  for (const dst of clientRoutes) {
    await ip(['-n', C, 'route', 'add', dst, 'via', NODE_IP]);
  }
  await ip(['-n', C, 'route', 'add', CLUSTER_CIDR, 'via', NODE_IP]);
  // The node needs a route covering the service range (docs/datapath-testing.md); it points into the client,
  // which does not forward, so nothing leaves.
  await ip(['-n', N, 'route', 'add', 'default', 'via', CLIENT_IP]);
  if (w.ipv6) {
    await ip(['-n', C, '-6', 'route', 'add', SERVICE_CIDR6, 'via', NODE_IP6]);
    await ip(['-n', C, '-6', 'route', 'add', 'fd00:10:244::/48', 'via', NODE_IP6]);
    await ip(['-n', N, '-6', 'route', 'add', 'default', 'via', CLIENT_IP6]);
  }
}

/** Per-namespace sysctls (never the root namespace's): the node forwards, the client does not. */
async function setForwarding(w: Wiring): Promise<void> {
  const { setSysctl, node: N, client: C } = w;
  await setSysctl(N, 'net.ipv4.ip_forward', '1');
  await setSysctl(N, 'net.bridge.bridge-nf-call-iptables', '1');
  await setSysctl(C, 'net.ipv4.ip_forward', '0');
  if (w.ipv6) {
    await setSysctl(N, 'net.ipv6.conf.all.forwarding', '1');
    await setSysctl(N, 'net.bridge.bridge-nf-call-ip6tables', '1');
    await setSysctl(C, 'net.ipv6.conf.all.forwarding', '0');
  }
}

/** Ends a child: its process group if it has its own (detached), else the process. SIGTERM, then SIGKILL after 3 s. */
async function endChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const pid = child.pid;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig); // process group of a detached child (its id is the child's pid)
    } catch {
      try {
        child.kill(sig);
      } catch {
        /* already gone */
      }
    }
  };
  child.stdin?.end();
  signal('SIGTERM');
  const termed = await Promise.race([exited.then(() => true), idle(3000).then(() => false)]);
  if (!termed) {
    signal('SIGKILL');
    await Promise.race([exited, idle(2000)]);
  }
}
