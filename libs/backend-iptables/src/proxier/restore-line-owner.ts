/**
 * Which service port an iptables-restore payload line was written for: iptables-restore names the
 * line it failed on ("Error occurred at line: N"), and the proxier then programs the others without
 * that service port (issue 20, as nftables mode does; see iptables-proxier.ts).
 *
 * A line belongs to a service port when it names one of its chains (declared, appended to or jumped
 * to: KUBE-SVC/SVL/EXT/FW share the port's hash, KUBE-SEP chains hash the endpoint too), or, for the
 * rules in shared chains whose target is not one of ours (`… has no endpoints" -j REJECT`), when its
 * comment starts with the port's comment name. Computed only when a restore failed: one hash per
 * service port and endpoint (~0.1 s at 10,000 services × 5 endpoints).
 */
import type { EndpointsMap, ServicePortMap } from '@kube-proxy/core';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { portProtoHash, servicePortEndpointChainName } from '../render/index.js';
import { commentName } from '../render/comment-name.js';

const SERVICE_CHAIN = /^:?KUBE-(SVC|SVL|EXT|FW|SEP)-([A-Z2-7]{16})$/;

/** The service port key (`namespace/name:port`) `line` was written for, or undefined. */
export function ownerOfRestoreLine(line: string, serviceMap: ServicePortMap, endpointsMap: EndpointsMap): string | undefined {
  let tokens: string[];
  try {
    tokens = tokenize(line);
  } catch {
    return undefined;
  }
  const hashes = new Set<string>();
  const seps = new Set<string>();
  for (const t of tokens) {
    const m = SERVICE_CHAIN.exec(t);
    if (m === null) continue;
    if (m[1] === 'SEP') seps.add(t.replace(/^:/, ''));
    else hashes.add(m[2] as string);
  }
  const commentAt = tokens.indexOf('--comment');
  const comment = commentAt >= 0 ? tokens[commentAt + 1] : undefined;
  for (const [key, port] of serviceMap) {
    if (hashes.size > 0 && hashes.has(portProtoHash(key, port.protocol))) return key;
    if (seps.size > 0) {
      for (const ep of endpointsMap.get(key) ?? []) if (seps.has(servicePortEndpointChainName(key, port.protocol, ep.key))) return key;
    }
  }
  if (comment === undefined) return undefined;
  for (const key of serviceMap.keys()) {
    const name = commentName(key);
    if (comment === name || comment.startsWith(`${name} `)) return key;
  }
  return undefined;
}
