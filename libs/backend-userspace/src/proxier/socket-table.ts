import type { Logger, ServicePort } from '@kube-proxy/core';
import type { OpenProxySocket, ProxyPortAllocator, ProxySocketHandle, ProxyTarget } from '@kube-proxy/userspace-proxy';
import type { DesiredPort } from './desired-ports.js';

/** The proxy sockets of one service port. */
export interface ServicePortProxy {
  readonly key: string;
  readonly protocol: 'TCP' | 'UDP';
  service: ServicePort;
  readonly internal: ProxySocketHandle;
  /** A second socket for external traffic when its endpoints differ by policy; else null. */
  external: ProxySocketHandle | null;
}

type ClosingSocket = { readonly key: string; readonly protocol: 'TCP' | 'UDP'; readonly socket: ProxySocketHandle };

export interface ReconcileResult {
  /** Service ports whose socket could not be opened this time (retried on the next sync). */
  readonly failed: readonly string[];
  /** Sockets to close once the capture rules no longer point at them. */
  readonly toClose: readonly ClosingSocket[];
  /**
   * Whether the capture rules must change: a socket opened or closed, or a service port's addresses
   * or ports moved. False when only endpoints changed, which the sockets already follow.
   */
  readonly capturesChanged: boolean;
}

/** Sockets opened at once when the kernel picks their ports (see reconcileEach). */
const PARALLEL_OPENS = 64;

type MutableResult = { failed: string[]; toClose: ClosingSocket[]; capturesChanged: boolean };

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Whether two versions of a service port capture the same traffic (what the capture rules are made of). */
function sameCapture(a: ServicePort, b: ServicePort): boolean {
  return (
    a.clusterIP === b.clusterIP &&
    a.port === b.port &&
    a.nodePort === b.nodePort &&
    a.protocol === b.protocol &&
    sameList(a.externalIPs, b.externalIPs) &&
    sameList(a.loadBalancerVIPs, b.loadBalancerVIPs)
  );
}

function isAddressInUse(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'EADDRINUSE';
}

/**
 * The service-port → proxy-socket table of one proxier. A service port keeps its socket (and so its
 * proxy port and the connections on it) for as long as it exists with the same protocol; only its
 * endpoints and addresses change.
 */
export class SocketTable {
  private readonly proxies = new Map<string, ServicePortProxy>();

  constructor(
    private readonly allocator: ProxyPortAllocator,
    private readonly open: OpenProxySocket,
    private readonly logger: Logger,
    /** --dry-run: sockets are only pretended, and the log says so. */
    private readonly dryRun = false,
  ) {}

  get size(): number {
    return this.proxies.size;
  }

  /** Current proxies, sorted by key. */
  entries(): ServicePortProxy[] {
    return [...this.proxies.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The service-port keys that have sockets (insertion order). */
  keys(): IterableIterator<string> {
    return this.proxies.keys();
  }

  get(key: string): ServicePortProxy | undefined {
    return this.proxies.get(key);
  }

  /**
   * Opens sockets for new service ports, updates endpoints and affinity of existing ones, and takes
   * the removed ones out of the table (returned in `toClose`: the caller closes them after the
   * capture rules stop pointing at them).
   */
  async reconcile(desired: readonly DesiredPort[]): Promise<ReconcileResult> {
    const result: MutableResult = { failed: [], toClose: [], capturesChanged: false };
    await this.reconcileEach(desired, result);
    const wanted = new Set(desired.map((d) => d.key));
    for (const proxy of [...this.proxies.values()]) if (!wanted.has(proxy.key)) this.remove(proxy, result);
    return result;
  }

  /**
   * The same for the service ports of `keys` only (a partial sync: the ports of the Services that
   * changed): `desired` holds those of them that still exist, the others are removed. Cost follows
   * the change, not the table.
   */
  async reconcileKeys(desired: readonly DesiredPort[], keys: Iterable<string>): Promise<ReconcileResult> {
    const result: MutableResult = { failed: [], toClose: [], capturesChanged: false };
    await this.reconcileEach(desired, result);
    const wanted = new Set(desired.map((d) => d.key));
    for (const key of keys) {
      const proxy = this.proxies.get(key);
      if (proxy !== undefined && !wanted.has(key)) this.remove(proxy, result);
    }
    return result;
  }

  /**
   * Each desired port, up to PARALLEL_OPENS at a time when the kernel picks the ports. Every new
   * socket is a round trip to the data-plane worker; one after another, 10,000 of them were most of
   * a cold start's wall time. With --proxy-port-range (lowest free first) and in a dry run (whose
   * pretended ports are numbered in order) they stay one at a time, so ports are handed out as before.
   */
  private async reconcileEach(desired: readonly DesiredPort[], result: MutableResult): Promise<void> {
    const lanes = this.allocator.range === null && !this.dryRun ? Math.min(PARALLEL_OPENS, desired.length) : 1;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < desired.length) await this.reconcileOne(desired[next++] as DesiredPort, result);
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  }

  private async reconcileOne(want: DesiredPort, result: MutableResult): Promise<void> {
    const protocol = want.service.protocol as 'TCP' | 'UDP';
    let proxy = this.proxies.get(want.key);
    if (proxy !== undefined && proxy.protocol !== protocol) {
      this.remove(proxy, result);
      proxy = undefined;
    }
    const affinity = want.service.sessionAffinityClientIP ? want.service.stickyMaxAgeSeconds : 0;
    try {
      if (proxy === undefined) {
        const internal = await this.openListener(want.key, protocol, want.internal, affinity);
        proxy = { key: want.key, protocol, service: want.service, internal, external: null };
        this.proxies.set(want.key, proxy);
        result.capturesChanged = true;
      } else if (!sameCapture(proxy.service, want.service)) {
        result.capturesChanged = true;
      }
      proxy.service = want.service;
      proxy.internal.update(want.internal, affinity);
      if (want.external === null) {
        if (proxy.external !== null) {
          result.toClose.push({ key: want.key, protocol, socket: proxy.external });
          this.allocator.release(protocol, proxy.external.port);
          proxy.external = null;
          result.capturesChanged = true;
        }
      } else if (proxy.external === null) {
        proxy.external = await this.openListener(want.key, protocol, want.external, affinity);
        result.capturesChanged = true;
      } else {
        proxy.external.update(want.external, affinity);
      }
    } catch (err) {
      result.failed.push(want.key);
      this.logger.error('Failed to open a proxy socket for the service port; will retry', { servicePort: want.key, protocol, error: String(err) });
    }
  }

  /**
   * Forgets every socket without closing it: they died with the data plane. Their ports go back to
   * the allocator, so the next reconcile opens the same ports again where it can.
   */
  forgetAll(): void {
    for (const proxy of this.proxies.values()) {
      for (const socket of [proxy.internal, proxy.external]) if (socket !== null) this.allocator.release(proxy.protocol, socket.port);
    }
    this.proxies.clear();
  }

  /** Closes every socket (the proxier is stopping for good or cleaning up). */
  closeAll(): void {
    const result: MutableResult = { failed: [], toClose: [], capturesChanged: false };
    for (const proxy of [...this.proxies.values()]) this.remove(proxy, result);
    for (const { socket } of result.toClose) socket.close();
  }

  private remove(proxy: ServicePortProxy, result: MutableResult): void {
    this.proxies.delete(proxy.key);
    result.capturesChanged = true;
    for (const socket of [proxy.internal, proxy.external]) {
      if (socket === null) continue;
      result.toClose.push({ key: proxy.key, protocol: proxy.protocol, socket });
      this.allocator.release(proxy.protocol, socket.port);
    }
  }

  private async openListener(key: string, protocol: 'TCP' | 'UDP', endpoints: readonly ProxyTarget[], affinity: number): Promise<ProxySocketHandle> {
    let lastError: unknown = new Error(`no free port in --proxy-port-range ${describeRange(this.allocator)}`);
    for (const port of this.allocator.candidates(protocol)) {
      try {
        const socket = await this.open({ protocol, port, endpoints, affinitySeconds: affinity });
        this.allocator.take(protocol, socket.port);
        this.logger.info(this.dryRun ? 'Would open proxy port (dry run)' : 'Opened proxy port', { servicePort: key, protocol, port: socket.port });
        return socket;
      } catch (err) {
        lastError = err;
        // Another process holds this one: try the next port of the range.
        if (port !== 0 && isAddressInUse(err)) continue;
        throw err;
      }
    }
    throw lastError;
  }
}

function describeRange(allocator: ProxyPortAllocator): string {
  return allocator.range ? `${allocator.range.min}-${allocator.range.max}` : '(none)';
}
