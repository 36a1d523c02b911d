import { canonicalIP } from '../semantics/model/ip.js';
import { isPortNumber } from '../semantics/model/port-number.js';
import type { IPFamily } from '../semantics/model/protocol.js';
import type { CommandExecutor } from '../host/command-executor.js';
import type { Logger } from '../host/logger.js';
import type { AppliedChanges, EndpointsMap, ServicePortMap } from '../semantics/tracking/types.js';
import { forEachUDPFlow } from './conntrack-listing.js';
import { StaleUDPFlowFinder, type StaleUDPFlows } from './stale-udp-flows.js';
import { udpFrontends } from './udp-frontends.js';

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

/** How long listing the conntrack table may take before the reconciliation gives up (then: event-driven cleanup). */
export const CONNTRACK_LIST_TIMEOUT_MS = 60_000;

/**
 * Deletes stale UDP conntrack flows after a successful sync through the `conntrack` CLI. Best effort:
 * failures are logged, never thrown.
 *
 * The first sync of a proxier reconciles against the kernel's table (`reconcile`): it lists the UDP
 * flows and deletes only those not answered by a serving endpoint of their frontend, as upstream's
 * v1.32+ reconciler decides. A restart therefore keeps the flows of services whose endpoints did not
 * change (upstream issue #122740: its first sync treated every UDP service as newly active and flushed
 * all their flows, breaking QUIC and other long UDP flows). Later syncs use the sync's own changes,
 * as upstream's v1.31 event-driven CleanStaleEntries (deleteStaleServiceConntrackEntries +
 * deleteStaleEndpointConntrackEntries): no listing of a large table on every sync.
 */
export class ConntrackCleaner {
  private readonly family: IPFamily;
  private readonly executor: CommandExecutor;
  private readonly logger: Logger;
  private readonly binary: string;
  private missingBinaryLogged = false;
  private reconciled = false;

  constructor(options: ConntrackCleanerOptions) {
    this.family = options.family;
    this.executor = options.executor;
    this.logger = options.logger;
    this.binary = options.binary ?? 'conntrack';
  }

  /** The conntrack argument lists cleanup would run for these changes (exposed for tests and logs). */
  commandsFor(serviceMap: ServicePortMap, changes: AppliedChanges): string[][] {
    const commands: string[][] = [];
    const withFamily = (args: string[]): string[] => this.withFamily(args);
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

  /**
   * After each successful sync: the first reconciles against the kernel's table; when that table
   * cannot be listed, and on every later sync, the sync's changes decide (`cleanStaleEntries`).
   */
  async cleanAfterSync(serviceMap: ServicePortMap, endpointsMap: EndpointsMap, changes: AppliedChanges): Promise<void> {
    if (!this.reconciled) {
      this.reconciled = true;
      if (await this.reconcile(serviceMap, endpointsMap)) return;
    }
    await this.cleanStaleEntries(serviceMap, changes);
  }

  /**
   * Lists the UDP flows of this family and deletes those that are stale against the desired state
   * (see StaleUDPFlowFinder). Returns false when the table could not be listed (nothing was deleted).
   */
  private async reconcile(serviceMap: ServicePortMap, endpointsMap: EndpointsMap): Promise<boolean> {
    // -f always: without it conntrack lists the flows of both families.
    const family = this.family === 'IPv6' ? 'ipv6' : 'ipv4';
    const listed = await this.executor.run(this.binary, ['-L', '-p', 'udp', '-f', family], {
      timeoutMs: CONNTRACK_LIST_TIMEOUT_MS,
    });
    if (listed.exitCode !== 0) {
      this.logger.warn('Could not list UDP conntrack entries; clearing by this sync\'s changes instead', {
        exitCode: listed.exitCode,
        error: (listed.spawnError ?? listed.stderr).trim(),
      });
      return false;
    }
    const commands = this.reconcileCommands(serviceMap, endpointsMap, listed.stdout);
    if (commands.length > 0 && !(await this.execBatch(commands))) {
      for (const args of commands) await this.exec(args);
    }
    return true;
  }

  /**
   * All deletions in one `conntrack -R -` (conntrack-tools ≥ 1.4.6 reads command lines from stdin): one
   * process instead of one per stale group. The lines are built from canonical addresses and port
   * numbers only, so none can break into another. False when the batch failed (then: one by one).
   */
  private async execBatch(commands: readonly string[][]): Promise<boolean> {
    this.logger.debug('Clearing conntrack entries in one batch', { commands: commands.length });
    const input = `${commands.map((args) => args.join(' ')).join('\n')}\n`;
    const result = await this.executor.run(this.binary, ['-R', '-'], { input, discardStdout: true });
    if (result.exitCode === 0) return true;
    this.logger.verbose('Batched conntrack deletion failed; deleting one filter at a time', {
      exitCode: result.exitCode,
      output: (result.spawnError ?? result.stderr).trim(),
    });
    return false;
  }

  /** The conntrack deletions reconciling `listing` (`conntrack -L -p udp` output) would run. */
  private reconcileCommands(serviceMap: ServicePortMap, endpointsMap: EndpointsMap, listing: string): string[][] {
    const finder = new StaleUDPFlowFinder(udpFrontends(serviceMap, endpointsMap));
    const ipv6 = this.family === 'IPv6';
    const flows = forEachUDPFlow(listing, (flow) => {
      if (!ipv6) return finder.visit(flow);
      // conntrack prints inet_ntop text; core compares canonical text (equal in practice, but not by contract).
      const origDst = canonicalIP(flow.origDst);
      const replySrc = canonicalIP(flow.replySrc);
      if (origDst !== undefined && replySrc !== undefined) finder.visit({ ...flow, origDst, replySrc });
    });
    const commands: string[][] = [];
    for (const group of finder.stale) {
      const args = this.staleFlowArgs(group);
      if (args !== undefined) commands.push(args);
    }
    this.logger.verbose('Reconciled UDP conntrack entries', { family: this.family, flows, staleGroups: commands.length });
    return commands;
  }

  /** One group's delete filter; undefined when a field is not canonical address text or a port. */
  private staleFlowArgs(group: StaleUDPFlows): string[] | undefined {
    const { origDst, origDstPort, replySrc, replySrcPort } = group;
    const ips = origDst === undefined ? [replySrc] : [origDst, replySrc];
    if (!ips.every((ip) => canonicalIP(ip) === ip) || !isPortNumber(origDstPort) || !isPortNumber(replySrcPort)) {
      this.logger.warn('Not clearing a conntrack flow whose listing is not an address and port', { group });
      return undefined;
    }
    const dst = origDst === undefined ? [] : ['--orig-dst', origDst];
    return this.withFamily([
      '-D', '-p', 'udp', ...dst, '--orig-port-dst', String(origDstPort),
      '--reply-src', replySrc, '--reply-port-src', String(replySrcPort),
    ]);
  }

  private withFamily(args: string[]): string[] {
    return this.family === 'IPv6' ? [...args, '-f', 'ipv6'] : args;
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
