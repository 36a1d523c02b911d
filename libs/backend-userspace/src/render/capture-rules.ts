import type { IPFamily, Protocol } from '@kube-proxy/core';
import { assertRestorePayload, canonicalIP, commentText, isPortNumber, isValidIP, UnsafeRestoreTextError } from '@kube-proxy/core';
import { joinArgs } from '@kube-proxy/netfilter-iptables';

/*
 * The capture rules of userspace mode, in upstream's (pkg/proxy/userspace, v1.25) shapes, written as
 * one iptables-restore payload so a sync replaces them atomically: declaring a chain in a --noflush
 * restore flushes it, and the rules that follow are its whole new content.
 *
 * Defence in depth (issue 10), so that the renderer is safe fed anything directly: the service port
 * name reaches the rules only as core's commentText (a valid `ns/name:port` byte for byte, anything
 * else percent-encoded); every Service address must be core's canonical IP text (the listen and
 * node IPs at least an IP) and every port a port number, else UnsafeRestoreTextError and no payload; and the finished payload is checked line by
 * line (assertRestorePayload: no newline inside a line, no NUL or `\r`, nothing over-long).
 */

export const PORTALS_CONTAINER = 'KUBE-PORTALS-CONTAINER';
export const PORTALS_HOST = 'KUBE-PORTALS-HOST';
export const NODEPORT_CONTAINER = 'KUBE-NODEPORT-CONTAINER';
export const NODEPORT_HOST = 'KUBE-NODEPORT-HOST';
export const NODEPORT_NON_LOCAL = 'KUBE-NODEPORT-NON-LOCAL';

/** One service port's addresses and the proxy ports that serve them. */
export interface CapturePortal {
  /** The service port's name (`ns/name:port`), used as the rules' comment. */
  readonly name: string;
  readonly protocol: Protocol;
  /** The cluster IP ("" when the service has none of this family). */
  readonly clusterIP: string;
  readonly port: number;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  /** 0 when none. */
  readonly nodePort: number;
  /** The proxy port serving cluster-IP traffic. */
  readonly internalProxyPort: number;
  /** The proxy port serving external traffic (externalIPs, LoadBalancer IPs, NodePort). */
  readonly externalProxyPort: number;
}

export interface CaptureOptions {
  readonly family: IPFamily;
  /** The address the proxy sockets listen on; `0.0.0.0` / `::` means every address. */
  readonly listenIP: string;
  /**
   * The node's IP: host-originated traffic is DNATed to it when the proxy listens everywhere, because
   * REDIRECT in OUTPUT sends to loopback and replies would leave from another address. Null: the
   * host rules are left out (and the proxier says so).
   */
  readonly nodeIP: string | null;
  /**
   * The node addresses NodePorts answer on (core's resolved nodePortAddresses selection); null or
   * absent: every local address, as upstream's userspace mode always did.
   */
  readonly nodePortIPs?: readonly string[] | null;
}

export interface CaptureRuleset {
  readonly payload: string;
  readonly natRules: number;
  readonly filterRules: number;
  /** True when host-originated traffic is not captured (no node IP to DNAT to). */
  readonly hostRulesOmitted: boolean;
}

function isUnspecified(ip: string): boolean {
  return ip === '0.0.0.0' || ip === '::';
}

function hostCIDR(ip: string, family: IPFamily): string {
  return `${ip}/${family === 'IPv6' ? 128 : 32}`;
}

function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * Renders the userspace capture rules for `portals` (sorted by name for a stable payload). Cluster
 * IPs and LoadBalancer IPs: a from-container rule (PREROUTING) and a from-host rule (OUTPUT).
 * External IPs, as upstream: from containers only when the packet did not come in over a bridge
 * port (physdev) or is addressed to this node, from the host only when addressed to this node.
 * NodePorts: from containers and from the host on any local address (or only on `nodePortIPs`, one
 * rule per address, when --nodeport-addresses narrows them), and an ACCEPT of the proxy port in filter
 * for default-deny INPUT policies.
 */
export function renderCaptureRules(portals: readonly CapturePortal[], options: CaptureOptions): CaptureRuleset {
  const { family, listenIP, nodeIP } = options;
  // From the configuration and the host, not from Services: an IP, not necessarily canonical text.
  if (!isValidIP(listenIP)) refuse('listen IP', listenIP, '');
  if (nodeIP !== null && !isValidIP(nodeIP)) refuse('node IP', nodeIP, '');
  const nodePortTargets: ReadonlyArray<string | null> = options.nodePortIPs ?? [null];
  for (const ip of nodePortTargets) if (ip !== null && !isValidIP(ip)) refuse('node-port IP', ip, '');
  for (const p of portals) checkPortal(p);
  const anyAddress = isUnspecified(listenIP);
  const hostTarget = anyAddress ? nodeIP : listenIP;
  const nat: string[] = [];
  const filter: string[] = [];

  const common = (p: CapturePortal, destIP: string | null, destPort: number): string[] => {
    const proto = p.protocol.toLowerCase();
    const args = ['-m', 'comment', '--comment', commentText(p.name), '-p', proto, '-m', proto, '--dport', String(destPort)];
    if (destIP !== null) args.push('-d', hostCIDR(destIP, family));
    return args;
  };
  const toContainer = (proxyPort: number): string[] =>
    anyAddress ? ['-j', 'REDIRECT', '--to-ports', String(proxyPort)] : ['-j', 'DNAT', '--to-destination', hostPort(listenIP, proxyPort)];
  const toHost = (proxyPort: number): string[] | null =>
    hostTarget === null ? null : ['-j', 'DNAT', '--to-destination', hostPort(hostTarget, proxyPort)];
  const add = (lines: string[], chain: string, args: readonly string[]): void => {
    lines.push(`-A ${chain} ${joinArgs(args)}`);
  };
  const DST_LOCAL = ['-m', 'addrtype', '--dst-type', 'LOCAL'];
  const NOT_FROM_BRIDGE = ['-m', 'physdev', '!', '--physdev-is-in'];

  const sorted = [...portals].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol < b.protocol ? -1 : 1));
  for (const p of sorted) {
    const plain = (ip: string, proxyPort: number): void => {
      add(nat, PORTALS_CONTAINER, [...common(p, ip, p.port), ...toContainer(proxyPort)]);
      const host = toHost(proxyPort);
      if (host) add(nat, PORTALS_HOST, [...common(p, ip, p.port), ...host]);
    };
    if (p.clusterIP !== '') plain(p.clusterIP, p.internalProxyPort);
    for (const ip of p.externalIPs) {
      add(nat, PORTALS_CONTAINER, [...common(p, ip, p.port), ...NOT_FROM_BRIDGE, ...toContainer(p.externalProxyPort)]);
      add(nat, PORTALS_CONTAINER, [...common(p, ip, p.port), ...DST_LOCAL, ...toContainer(p.externalProxyPort)]);
      const host = toHost(p.externalProxyPort);
      if (host) add(nat, PORTALS_HOST, [...common(p, ip, p.port), ...DST_LOCAL, ...host]);
    }
    for (const ip of p.loadBalancerIPs) plain(ip, p.externalProxyPort);
    if (p.nodePort !== 0 && nodePortTargets.length > 0) {
      const host = toHost(p.externalProxyPort);
      for (const ip of nodePortTargets) {
        add(nat, NODEPORT_CONTAINER, [...common(p, ip, p.nodePort), ...toContainer(p.externalProxyPort)]);
        if (host) add(nat, NODEPORT_HOST, [...common(p, ip, p.nodePort), ...host]);
      }
      add(filter, NODEPORT_NON_LOCAL, [...common(p, null, p.externalProxyPort), '-m', 'state', '--state', 'NEW', '-j', 'ACCEPT']);
    }
  }

  const payload = [
    '*nat',
    `:${PORTALS_CONTAINER} - [0:0]`,
    `:${PORTALS_HOST} - [0:0]`,
    `:${NODEPORT_CONTAINER} - [0:0]`,
    `:${NODEPORT_HOST} - [0:0]`,
    ...nat,
    'COMMIT',
    '*filter',
    `:${NODEPORT_NON_LOCAL} - [0:0]`,
    ...filter,
    'COMMIT',
    '',
  ].join('\n');
  // 9 chain, table and COMMIT lines around the rules.
  assertRestorePayload(payload, nat.length + filter.length + 9);
  return { payload, natRules: nat.length, filterRules: filter.length, hostRulesOmitted: hostTarget === null && sorted.length > 0 };
}

function refuse(what: string, value: unknown, owner: string): never {
  throw new UnsafeRestoreTextError(
    `refusing to render ${what} ${JSON.stringify(String(value).slice(0, 120))}${owner ? ` of ${commentText(owner)}` : ''}: not the canonical text core produces`,
  );
}

function checkIP(ip: string, what: string, owner: string): void {
  if (typeof ip !== 'string' || canonicalIP(ip) !== ip) refuse(what, ip, owner);
}

/** The values of one portal that reach rules: canonical IP text, port numbers, a known protocol. */
function checkPortal(p: CapturePortal): void {
  if (p.protocol !== 'TCP' && p.protocol !== 'UDP' && p.protocol !== 'SCTP') refuse('protocol', p.protocol, p.name);
  if (p.clusterIP !== '') checkIP(p.clusterIP, 'cluster IP', p.name);
  for (const ip of p.externalIPs) checkIP(ip, 'external IP', p.name);
  for (const ip of p.loadBalancerIPs) checkIP(ip, 'load balancer IP', p.name);
  for (const [what, port] of [['port', p.port], ['internal proxy port', p.internalProxyPort], ['external proxy port', p.externalProxyPort]] as const) {
    if (!isPortNumber(port)) refuse(what, port, p.name);
  }
  if (p.nodePort !== 0 && !isPortNumber(p.nodePort)) refuse('node port', p.nodePort, p.name);
}
