/**
 * Names of nftables mode's localhost NodePort objects (KEP-6032), as upstream v1.37 writes them
 * (kubernetes PR #138427): one reject chain per protocol, and the map that sends a loopback
 * packet for a NodePort the userspace proxy does not serve to the chain of its protocol.
 */
import type { Protocol } from '@kube-proxy/core';

/** verdict map `inet_proto . inet_service : goto localhost-nodeport-reject-<protocol>`. */
export const LOCALHOST_REJECT_MAP = 'localhost-nodeport-reject-ports';

/** The protocols a loopback NodePort packet can be rejected for, in the order their chains are written. */
export const LOCALHOST_REJECT_PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];

/** `localhost-nodeport-reject-udp`: counts and rejects (upstream counts in a named counter `localhost-nodeport-rejected-udp`). */
export function localhostRejectChain(protocol: Protocol): string {
  return `localhost-nodeport-reject-${protocol.toLowerCase()}`;
}
