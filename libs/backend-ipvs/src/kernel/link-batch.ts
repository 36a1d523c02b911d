/**
 * The `ip -batch -` text of one applyLinkChanges call, and its reading back: the host kernel
 * client writes these lines to ip's stdin and the in-memory kernel applies the very same lines,
 *   link add kube-ipvs0 type dummy
 *   address add 10.96.0.1/32 dev kube-ipvs0
 *   address del fd00::1/128 dev kube-ipvs0
 * in that order (link, binds, unbinds). Addresses must be core's canonical text; /32 or /128 is
 * added here. The link is left DOWN, as upstream leaves kube-ipvs0.
 */
import { UnsafeRestoreTextError, canonicalIP } from '@kube-proxy/core';
import { KUBE_IPVS_DEVICE } from './ipvs-kernel.js';

export interface LinkChange {
  readonly createLink: boolean;
  readonly add: readonly string[];
  readonly remove: readonly string[];
}

export type LinkBatchLine =
  | { readonly op: 'link-add' }
  | { readonly op: 'address-add' | 'address-del'; readonly address: string };

function addressLine(verb: 'add' | 'del', address: string): string {
  if (typeof address !== 'string' || canonicalIP(address) !== address) {
    throw new UnsafeRestoreTextError(`${KUBE_IPVS_DEVICE}: ${JSON.stringify(String(address).slice(0, 80))} is not a canonical IP address`);
  }
  return `address ${verb} ${address}/${address.includes(':') ? 128 : 32} dev ${KUBE_IPVS_DEVICE}`;
}

/** The batch lines (without newlines) for `change`; empty when there is nothing to do. */
export function linkBatchLines(change: LinkChange): string[] {
  return [
    ...(change.createLink ? [`link add ${KUBE_IPVS_DEVICE} type dummy`] : []),
    ...change.add.map((a) => addressLine('add', a)),
    ...change.remove.map((a) => addressLine('del', a)),
  ];
}

const LINK_ADD = `link add ${KUBE_IPVS_DEVICE} type dummy`;
const ADDRESS = new RegExp(`^address (add|del) ([0-9A-Fa-f.:]+)/(32|128) dev ${KUBE_IPVS_DEVICE}$`);

/** Reads one line linkBatchLines writes; throws for anything else. */
export function parseLinkBatchLine(line: string): LinkBatchLine {
  if (line === LINK_ADD) return { op: 'link-add' };
  const m = ADDRESS.exec(line);
  const address = m === null ? undefined : canonicalIP(m[2]);
  if (m === null || address !== m[2] || (m[3] === '128') !== address.includes(':')) {
    throw new Error(`ip -batch: ${JSON.stringify(line.slice(0, 200))} is not a line of the kube-ipvs0 batch`);
  }
  return { op: m[1] === 'add' ? 'address-add' : 'address-del', address };
}
