import type { PortRange, Protocol } from '@kube-proxy/core';

/**
 * Hands out proxy ports from --proxy-port-range, lowest free first, separately per protocol (a TCP
 * and a UDP socket may share a number). Without a range it returns 0 and the kernel picks. A port
 * the bind found busy (another process) is skipped for the rest of that allocation only, so it is
 * tried again later.
 */
export class ProxyPortAllocator {
  private readonly inUse: Record<Protocol, Set<number>> = { TCP: new Set(), UDP: new Set(), SCTP: new Set() };

  constructor(readonly range: PortRange | null) {}

  /**
   * Candidates for one new socket, in order: each port of the range not held by us, lowest first.
   * `[0]` without a range.
   */
  *candidates(protocol: Protocol): Generator<number> {
    if (this.range === null) {
      yield 0;
      return;
    }
    const used = this.inUse[protocol];
    for (let port = Math.max(1, this.range.min); port <= this.range.max; port++) {
      if (!used.has(port)) yield port;
    }
  }

  /** Records the port a socket got. */
  take(protocol: Protocol, port: number): void {
    this.inUse[protocol].add(port);
  }

  release(protocol: Protocol, port: number): void {
    this.inUse[protocol].delete(port);
  }
}
