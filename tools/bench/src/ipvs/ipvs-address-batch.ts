/**
 * The `ip -batch -` text that binds service addresses on kube-ipvs0, as the IPVS proxier does
 * (upstream binds every cluster, external and load-balancer IP on its dummy device, left DOWN):
 * optionally `link add kube-ipvs0 type dummy`, then one `address add|del IP/32` (IPv6: /128) per
 * address. The benchmark renders and applies it beside the ipvsadm and ipset batches so the kernel
 * side of a full sync includes the address work too.
 */
export const BENCH_IPVS_DEVICE = 'kube-ipvs0';

export interface AddressChange {
  readonly createLink: boolean;
  readonly add: readonly string[];
  readonly remove: readonly string[];
}

function prefixed(ip: string): string {
  return ip.includes(':') ? `${ip}/128` : `${ip}/32`;
}

/** The batch for `change` ("" when there is nothing to do). */
export function renderAddressBatch(change: AddressChange): string {
  const lines: string[] = [];
  if (change.createLink) lines.push(`link add ${BENCH_IPVS_DEVICE} type dummy`);
  for (const ip of change.remove) lines.push(`address del ${prefixed(ip)} dev ${BENCH_IPVS_DEVICE}`);
  for (const ip of change.add) lines.push(`address add ${prefixed(ip)} dev ${BENCH_IPVS_DEVICE}`);
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/** What moves kube-ipvs0 from binding `before` to binding `after` (link already present). */
export function addressDiff(before: readonly string[], after: readonly string[]): AddressChange {
  const old = new Set(before);
  const now = new Set(after);
  return { createLink: false, add: after.filter((ip) => !old.has(ip)), remove: before.filter((ip) => !now.has(ip)) };
}
