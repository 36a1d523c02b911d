import { canonicalIP } from '../semantics/model/ip.js';
import { isPortNumber } from '../semantics/model/port-number.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import type { CommandExecutor } from '../host/command-executor.js';
import type { Logger } from '../host/logger.js';
import type { AppliedChanges, ServicePortMap } from '../semantics/tracking/types.js';

/** What conntrack prints (on stderr, exit 1) when a delete matched nothing: not an error. */
export const NO_CONNECTION_TO_DELETE = '0 flow entries have been deleted';

/** The IP of an endpoint key `ip:port` / `[ip6]:port` (upstream's proxyutil.IPPart). */
export function endpointIP(endpointKey: string): string {
  if (endpointKey.startsWith('[')) {
    const end = endpointKey.indexOf(']');
    return end > 0 ? endpointKey.slice(1, end) : endpointKey;
  }
  const colon = endpointKey.lastIndexOf(':');
  return colon > 0 && endpointKey.indexOf(':') === colon ? endpointKey.slice(0, colon) : endpointKey;
}

export interface ConntrackCleanerOptions {
  readonly family: IPFamily;
  readonly executor: CommandExecutor;
  readonly logger: Logger;
  /** The conntrack binary (default `conntrack`, found through PATH). */
  readonly binary?: string;
}

/**
 * Deletes stale UDP conntrack flows after a successful sync through the `conntrack` CLI, as upstream's
 * v1.31 pkg/proxy/conntrack CleanStaleEntries (deleteStaleServiceConntrackEntries +
 * deleteStaleEndpointConntrackEntries) — the event-driven cleanup, not the v1.32+ reconciler.
 * Best effort: failures are logged, never thrown.
 */
export class ConntrackCleaner {
  private readonly family: IPFamily;
  private readonly executor: CommandExecutor;
  private readonly logger: Logger;
  private readonly binary: string;
  private missingBinaryLogged = false;

  constructor(options: ConntrackCleanerOptions) {
    this.family = options.family;
    this.executor = options.executor;
    this.logger = options.logger;
    this.binary = options.binary ?? 'conntrack';
  }

  /** The conntrack argument lists cleanup would run for these changes (exposed for tests and logs). */
  commandsFor(serviceMap: ServicePortMap, changes: AppliedChanges): string[][] {
    const commands: string[][] = [];
    const withFamily = (args: string[]): string[] => (this.family === 'IPv6' ? [...args, '-f', 'ipv6'] : args);
    // Defence in depth: only core's canonical address text and real port numbers become arguments,
    // so no string can turn into a conntrack option (`-F` flushes the whole table) or an extra one.
    const usableIP = (ip: string): boolean => {
      if (ip === '') return false;
      if (canonicalIP(ip) === ip) return true;
      this.logger.warn('Not clearing conntrack entries for an address that is not canonical IP text', { ip });
      return false;
    };
    const usablePort = (port: number): boolean => {
      if (isPortNumber(port)) return true;
      this.logger.warn('Not clearing conntrack entries for an invalid port', { port });
      return false;
    };

    // Stale service entries: deleted UDP cluster IPs, and every IP / NodePort of UDP services that went
    // from no endpoints to some ("black hole" entries created while traffic was rejected/dropped).
    const serviceIPs = new Set<string>(changes.services.deletedUDPClusterIPs);
    const nodePorts = new Set<number>();
    for (const name of changes.endpoints.newlyActiveUDPServices) {
      const svc = serviceMap.get(name.key);
      if (!svc) continue;
      this.logger.debug('Newly-active UDP service may have stale conntrack entries', { servicePortName: name.key });
      serviceIPs.add(svc.clusterIP);
      for (const ip of svc.externalIPs) serviceIPs.add(ip);
      for (const ip of svc.loadBalancerVIPs) serviceIPs.add(ip);
      if (svc.protocol === 'UDP' && svc.nodePort !== 0) nodePorts.add(svc.nodePort);
    }
    for (const ip of serviceIPs) {
      if (!usableIP(ip)) continue;
      commands.push(withFamily(['-D', '--orig-dst', ip, '-p', 'udp']));
    }
    for (const port of nodePorts) {
      if (!usablePort(port)) continue;
      commands.push(withFamily(['-D', '-p', 'udp', '--orig-port-dst', String(port)]));
    }

    // Stale endpoint entries: flows DNATed to a UDP endpoint that went away.
    for (const { endpoint, servicePortName } of changes.endpoints.deletedUDPEndpoints) {
      const svc = serviceMap.get(servicePortName.key);
      if (!svc) continue;
      const epIP = endpointIP(endpoint);
      if (!usableIP(epIP)) continue;
      if (svc.nodePort !== 0 && usablePort(svc.nodePort)) {
        commands.push(withFamily(['-D', '-p', 'udp', '--orig-port-dst', String(svc.nodePort), '--dst-nat', epIP]));
      }
      for (const ip of [svc.clusterIP, ...svc.externalIPs, ...svc.loadBalancerVIPs]) {
        if (!usableIP(ip)) continue;
        commands.push(withFamily(['-D', '--orig-dst', ip, '--dst-nat', epIP, '-p', 'udp']));
      }
    }
    return commands;
  }

  /** Runs the cleanup for one sync's changes. */
  async cleanStaleEntries(serviceMap: ServicePortMap, changes: AppliedChanges): Promise<void> {
    for (const args of this.commandsFor(serviceMap, changes)) {
      await this.exec(args);
    }
  }

  private async exec(args: string[]): Promise<void> {
    this.logger.debug('Clearing conntrack entries', { args });
    const result = await this.executor.run(this.binary, args);
    if (result.exitCode === 0) return;
    if (result.spawnError !== undefined) {
      if (!this.missingBinaryLogged) {
        this.missingBinaryLogged = true;
        this.logger.error('conntrack binary not usable: stale UDP conntrack entries will not be deleted', {
          binary: this.binary,
          error: result.spawnError,
        });
      }
      return;
    }
    const output = `${result.stderr}\n${result.stdout}`;
    if (output.includes(NO_CONNECTION_TO_DELETE)) return;
    this.logger.error('Failed to delete stale conntrack entries', {
      args,
      exitCode: result.exitCode,
      output: output.trim(),
    });
  }
}
