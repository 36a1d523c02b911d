/**
 * One endpoint of one Service port, from an EndpointSlice: upstream's BaseEndpointInfo.
 * `key` is `ip:port` (IPv6 bracketed), upstream's String(), the identity used to de-duplicate
 * endpoints across slices and the input of KUBE-SEP chain-name hashes.
 */
export interface Endpoint {
  readonly ip: string;
  readonly port: number;
  readonly key: string;
  /** conditions.ready (nil = true). */
  readonly ready: boolean;
  /** conditions.serving (nil = true, as the discovery API documents and upstream reads it). */
  readonly serving: boolean;
  /** conditions.terminating (nil = false). */
  readonly terminating: boolean;
  /** nodeName equals this proxier's node. */
  readonly isLocal: boolean;
  readonly nodeName: string;
  readonly zone: string;
  /** hints.forZones names, or null when the endpoint has no zone hints. */
  readonly zoneHints: ReadonlySet<string> | null;
  /** hints.forNodes names, or null when the endpoint has no node hints. */
  readonly nodeHints: ReadonlySet<string> | null;
}

/** `ip:port` with IPv6 addresses bracketed, like net.JoinHostPort. */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}
