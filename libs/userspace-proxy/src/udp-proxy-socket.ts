import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { IPFamily, Logger } from '@kube-proxy/core';
import type { ProxyCounters } from './counters.js';
import type { EndpointPicker, ProxyTarget } from './endpoint-picker.js';
import type { FdBudget } from './fd-budget.js';
import { bindUdp } from './listen.js';

/** Datagrams held per association while its endpoint socket is still connecting. */
const MAX_PENDING = 64;

/** One client's path to its endpoint: a connected socket whose replies go back to the client. */
interface Association {
  readonly socket: Socket;
  readonly target: ProxyTarget;
  readonly timer: NodeJS.Timeout;
  /** Datagrams received before the endpoint socket connected; null once connected. */
  pending: Buffer[] | null;
}

/**
 * One UDP service port's proxy socket. Each client address:port gets an association: a socket
 * connected to one endpoint (round robin / affinity, chosen once), whose replies are sent back to
 * the client through this socket. Captured traffic arrived here through a REDIRECT/DNAT, so
 * conntrack rewrites the replies' source back to the service address the client used. An
 * association closes after `idleTimeoutMs` without traffic in either direction (upstream's
 * --udp-timeout); a client that keeps talking keeps its endpoint even if the endpoint is removed,
 * as an established TCP connection would.
 */
export class UdpProxySocket {
  readonly protocol = 'UDP';
  private readonly socket: Socket;
  private readonly associations = new Map<string, Association>();
  private boundPort = 0;
  private closed = false;

  constructor(
    private readonly family: IPFamily,
    private readonly picker: EndpointPicker,
    private readonly idleTimeoutMs: number,
    private readonly counters: ProxyCounters,
    private readonly budget: FdBudget,
    private readonly logger: Logger,
  ) {
    // ipv6Only: the IPv6 proxier's "::" socket must not also take the IPv4 port of the same number.
    this.socket = family === 'IPv6' ? createSocket({ type: 'udp6', ipv6Only: true }) : createSocket({ type: 'udp4' });
    this.socket.on('message', (msg, rinfo) => this.fromClient(msg, rinfo));
    this.socket.on('error', (err) => this.logger.error('UDP proxy socket error', { error: String(err) }));
  }

  get port(): number {
    return this.boundPort;
  }

  get associationCount(): number {
    return this.associations.size;
  }

  async listen(host: string, port: number): Promise<number> {
    this.boundPort = await bindUdp(this.socket, host, port);
    return this.boundPort;
  }

  /** Closes the socket and every association (replies could not reach their clients any more). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const key of [...this.associations.keys()]) this.drop(key);
    try {
      this.socket.close();
    } catch {
      // never bound
    }
  }

  private fromClient(msg: Buffer, rinfo: RemoteInfo): void {
    const key = `${rinfo.address}|${rinfo.port}`;
    let assoc = this.associations.get(key);
    if (assoc === undefined) {
      assoc = this.associate(key, rinfo);
      if (assoc === undefined) {
        this.counters.udpDropped++;
        return;
      }
    }
    assoc.timer.refresh();
    if (assoc.pending !== null) {
      if (assoc.pending.length < MAX_PENDING) assoc.pending.push(msg);
      else this.counters.udpDropped++;
      return;
    }
    assoc.socket.send(msg);
  }

  private associate(key: string, client: RemoteInfo): Association | undefined {
    const target = this.picker.next(client.address);
    if (target === undefined) return undefined;
    // One descriptor per association; past the budget the datagram is dropped (UDP may lose it anyway).
    if (!this.budget.tryAcquire(1)) return undefined;
    const socket = createSocket({ type: this.family === 'IPv6' ? 'udp6' : 'udp4' });
    const timer = setTimeout(() => this.drop(key), this.idleTimeoutMs).unref();
    const assoc: Association = { socket, target, timer, pending: [] };
    this.associations.set(key, assoc);
    this.counters.udpAssociationsOpened++;
    this.counters.udpAssociationsActive++;
    socket.on('message', (reply) => {
      assoc.timer.refresh();
      if (!this.closed) this.socket.send(reply, client.port, client.address);
    });
    socket.on('error', (err) => {
      // e.g. ECONNREFUSED from an ICMP port unreachable: the endpoint is gone; the next datagram
      // from this client starts a new association with another endpoint.
      this.logger.verbose('UDP association error', { client: `${client.address}:${client.port}`, endpoint: target.key, error: String(err) });
      this.drop(key);
    });
    socket.connect(target.port, target.ip, () => {
      const pending = assoc.pending ?? [];
      assoc.pending = null;
      for (const msg of pending) socket.send(msg);
    });
    return assoc;
  }

  private drop(key: string): void {
    const assoc = this.associations.get(key);
    if (assoc === undefined) return;
    this.associations.delete(key);
    this.counters.udpAssociationsActive--;
    this.budget.release(1);
    clearTimeout(assoc.timer);
    try {
      assoc.socket.close();
    } catch {
      // already closed
    }
  }
}
