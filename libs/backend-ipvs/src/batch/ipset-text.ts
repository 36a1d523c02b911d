/**
 * ipset lines in the notation `ipset save` prints, as `ipset restore` reads them:
 *   create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
 *   create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
 *   add KUBE-CLUSTER-IP 10.96.0.1,tcp:80
 * The create options are upstream's createSet (family/hashsize/maxelem for hash types, range for
 * bitmap:port). ipset 7.x's save adds `bucketsize … initval …`, which are kernel-chosen and not ours.
 * No `comment`: ipset has no per-set comment (see ipset-catalogue.ts).
 */
import type { IpsetDefinition } from '../state/ipset-catalogue.js';
import { IPSET_HASH_SIZE, IPSET_MAX_ELEM, IPSET_PORT_RANGE } from '../state/ipset-catalogue.js';

/** `create NAME TYPE …`. */
export function createSetLine(set: IpsetDefinition): string {
  if (set.type === 'bitmap:port') return `create ${set.name} ${set.type} range ${IPSET_PORT_RANGE}`;
  const family = set.family === 'IPv6' ? 'inet6' : 'inet';
  return `create ${set.name} ${set.type} family ${family} hashsize ${IPSET_HASH_SIZE} maxelem ${IPSET_MAX_ELEM}`;
}

export function addEntryLine(set: IpsetDefinition, entry: string): string {
  return `add ${set.name} ${entry}`;
}

export function deleteEntryLine(set: IpsetDefinition, entry: string): string {
  return `del ${set.name} ${entry}`;
}
