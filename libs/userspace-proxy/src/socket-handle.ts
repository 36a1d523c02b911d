import type { ProxyTarget } from './endpoint-picker.js';

/**
 * An open proxy socket, as the proxier sees it: in this thread (tests), in the data-plane worker, or
 * pretended (--dry-run).
 */
export interface ProxySocketHandle {
  readonly port: number;
  /** The endpoints new connections go to, in round-robin order. */
  readonly endpoints: readonly ProxyTarget[];
  /** ClientIP affinity timeout in seconds (0: none). */
  readonly affinitySeconds: number;
  /** New endpoints and affinity timeout (0: none); also drops expired affinity entries. */
  update(endpoints: readonly ProxyTarget[], affinitySeconds: number): void;
  /** Stops accepting/receiving; TCP connections already established carry on. */
  close(): void;
}

/** What a proxy socket is opened with. */
export interface OpenRequest {
  readonly protocol: 'TCP' | 'UDP';
  /** 0: the kernel picks. */
  readonly port: number;
  readonly endpoints: readonly ProxyTarget[];
  readonly affinitySeconds: number;
}

/** Opens a proxy socket; rejects with the bind error (its `code`, e.g. EADDRINUSE, is kept). */
export type OpenProxySocket = (request: OpenRequest) => Promise<ProxySocketHandle>;
