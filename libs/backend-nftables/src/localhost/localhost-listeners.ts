/**
 * The userspace TCP listeners of one IP family's localhost NodePorts (KEP-6032), on the shared
 * proxy engine: one TcpProxySocket per NodePort on 127.0.0.1 or ::1, each with its own endpoint
 * picker. Reconciled after every sync from what the service ports want (upstream's
 * LocalNodePortProxy.SyncNodePorts): a NodePort with no endpoint to use gets no listener (the
 * kernel refuses the connection), a gone one is closed (established connections carry on, as in
 * userspace mode), a kept one gets its new endpoints without dropping its affinity pins. A bind
 * that fails (another process holds the port) is logged and counted, and tried again next sync.
 */
import type { Clock, IPFamily, Logger } from '@kube-proxy/core';
import { EndpointPicker, TcpProxySocket, type FdBudget, type ProxyCounters } from '@kube-proxy/userspace-proxy';
import type { LocalhostNodePort } from './localhost-nodeport.js';

/** What the listener set reports to its metrics. */
export interface LocalhostListenerObserver {
  listeners(family: IPFamily, count: number): void;
  creationFailed(family: IPFamily): void;
}

export interface LocalhostListenersOptions {
  readonly family: IPFamily;
  readonly counters: ProxyCounters;
  readonly budget: FdBudget;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly observer?: LocalhostListenerObserver;
  /** Tests: where to listen (default 127.0.0.1 / ::1 by family). */
  readonly listenIP?: string;
}

interface Listener {
  readonly socket: TcpProxySocket;
  readonly picker: EndpointPicker;
}

export class LocalhostNodePortListeners {
  readonly listenIP: string;
  private readonly active = new Map<number, Listener>();
  private closed = false;

  constructor(private readonly options: LocalhostListenersOptions) {
    this.listenIP = options.listenIP ?? (options.family === 'IPv6' ? '::1' : '127.0.0.1');
  }

  /** The node ports with a listener, ascending. */
  get ports(): number[] {
    return [...this.active.keys()].sort((a, b) => a - b);
  }

  /** The endpoints the listener of `nodePort` sends new connections to (undefined: no listener). */
  endpointsOf(nodePort: number): readonly string[] | undefined {
    return this.active.get(nodePort)?.picker.targets.map((t) => t.key);
  }

  /** Brings the listeners to `wanted`; resolves once every new bind succeeded or failed. */
  async sync(wanted: Iterable<LocalhostNodePort>): Promise<void> {
    if (this.closed) return;
    const byPort = new Map<number, LocalhostNodePort>();
    for (const w of wanted) if (w.endpoints.length > 0) byPort.set(w.nodePort, w);
    for (const [port, listener] of this.active) {
      if (byPort.has(port)) continue;
      this.options.logger.verbose('Removing localhost nodeport proxy', { protocol: 'TCP', port });
      listener.socket.close();
      this.active.delete(port);
    }
    const opening: Array<Promise<void>> = [];
    for (const [port, w] of byPort) {
      const existing = this.active.get(port);
      if (existing) {
        existing.picker.update(w.endpoints, w.affinitySeconds);
        existing.picker.sweep();
      } else {
        opening.push(this.open(w));
      }
    }
    await Promise.all(opening);
    this.options.observer?.listeners(this.options.family, this.active.size);
  }

  private async open(w: LocalhostNodePort): Promise<void> {
    const { counters, budget, clock, logger, family } = this.options;
    const picker = new EndpointPicker(clock);
    picker.update(w.endpoints, w.affinitySeconds);
    const socket = new TcpProxySocket(picker, counters, budget, logger);
    try {
      await socket.listen(this.listenIP, w.nodePort);
    } catch (err) {
      socket.close();
      this.options.observer?.creationFailed(family);
      logger.error('Failed to create localhost nodeport proxy', { protocol: 'TCP', address: this.listenIP, port: w.nodePort, error: String(err) });
      return;
    }
    if (this.closed) {
      socket.close();
      return;
    }
    this.active.set(w.nodePort, { socket, picker });
    logger.verbose('Created localhost nodeport proxy', { protocol: 'TCP', address: this.listenIP, port: w.nodePort, endpoints: w.endpoints.length });
  }

  /** Stops every listener (the proxier stopped); established connections end on their own. */
  close(): void {
    this.closed = true;
    for (const listener of this.active.values()) listener.socket.close();
    this.active.clear();
    this.options.observer?.listeners(this.options.family, 0);
  }
}
