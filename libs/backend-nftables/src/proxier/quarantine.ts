/**
 * Service ports left out of the table because nft refused a transaction on one of their lines.
 *
 * nft applies a transaction atomically, so one service port whose text nft refuses (issue 20: a
 * comment over 128 bytes) used to stop every sync, and the node got no rules at all. The line nft
 * names is mapped back to the service port it was written for (NftTransaction.ownerOfLine); that
 * port is quarantined and the sync retried at once without it, as invalid objects are skipped at the
 * source edge. A quarantined port is tried again when its Service or endpoints change, and on the
 * next full sync, so a transient refusal does not exclude it for ever.
 */

export class ServicePortQuarantine {
  /** service port key → why nft refused it. */
  private readonly ports = new Map<string, string>();

  get size(): number {
    return this.ports.size;
  }

  has(key: string): boolean {
    return this.ports.has(key);
  }

  add(key: string, reason: string): void {
    this.ports.set(key, reason);
  }

  /** Releases every port (a full sync tries them all again); returns the keys released. */
  releaseAll(): string[] {
    const keys = [...this.ports.keys()];
    this.ports.clear();
    return keys;
  }

  /** Releases the ports among `keys` (their Service or endpoints changed); returns those released. */
  release(keys: Iterable<string>): string[] {
    const released: string[] = [];
    for (const key of keys) if (this.ports.delete(key)) released.push(key);
    return released;
  }
}

/** `namespace/name` of a service port key `namespace/name:port` (or `namespace/name`). */
export function serviceOfKey(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : key.slice(0, colon);
}
