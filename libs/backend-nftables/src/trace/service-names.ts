/*
 * Which Service port a chain or an element belongs to, read from what kube-proxy (ours and upstream's)
 * writes: chain names `service-HASH-ns/name/tcp/port` (also external-, endpoint-, firewall-, local-,
 * affinity-) and element comments `ns/name:port` (upstream also writes "ns/name:port has no endpoints").
 */
const CHAIN_NAME = /^(service|external|endpoint|firewall|local|affinity)-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/(?:tcp|udp|sctp)\/([^_/]*)(?:__(.*))?$/;
const COMMENT = /^([a-z0-9.-]+)\/([a-z0-9.-]+):([a-z0-9-]*)(?:\s|$)/i;

export interface ChainOwner {
  readonly kind: string;
  /** `ns/name:port`. */
  readonly servicePort: string;
  /** `ns/name`. */
  readonly service: string;
}

export function chainOwner(chain: string): ChainOwner | undefined {
  const m = CHAIN_NAME.exec(chain);
  if (!m) return undefined;
  return { kind: m[1]!, service: `${m[2]}/${m[3]}`, servicePort: `${m[2]}/${m[3]}:${m[4]}` };
}

export function commentOwner(comment: string | undefined): string | undefined {
  if (comment === undefined) return undefined;
  const m = COMMENT.exec(comment);
  return m ? `${m[1]}/${m[2]}:${m[3]}` : undefined;
}

/** The chain a verdict (`goto X`, `jump X`) sends to. */
export function verdictTarget(verdict: string | undefined): string | undefined {
  return verdict === undefined ? undefined : /^(?:goto|jump) (\S+)$/.exec(verdict)?.[1];
}
