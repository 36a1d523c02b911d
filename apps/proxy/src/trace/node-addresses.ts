import { canonicalIP, type CommandExecutor, type V1Node } from '@kube-proxy/core';
import { TraceInputError } from './trace-packet.js';

/** The Node object's own addresses (status.addresses InternalIP and ExternalIP), canonical, de-duplicated. */
export function nodeObjectAddresses(node: V1Node | undefined): string[] {
  const out = new Set<string>();
  for (const a of node?.status?.addresses ?? []) {
    if (a.type !== 'InternalIP' && a.type !== 'ExternalIP') continue;
    const ip = canonicalIP(a.address);
    if (ip !== undefined) out.add(ip);
  }
  return [...out];
}

/** `--node-address` values, checked and canonical (they replace the node's own addresses). */
export function parseNodeAddresses(values: readonly string[]): string[] {
  return [
    ...new Set(
      values.map((v) => {
        const ip = canonicalIP(v.trim());
        if (ip === undefined) throw new TraceInputError(`malformed --node-address ${JSON.stringify(v)}: want an IP address`);
        return ip;
      }),
    ),
  ];
}

interface IpAddrJson {
  readonly addr_info?: readonly { readonly local?: string }[];
}

/**
 * This host's addresses, as the kernel's `addrtype LOCAL` / `fib daddr type local` sees them: every
 * address of every interface (`ip -j addr show`), loopback included.
 */
export async function hostAddresses(executor: CommandExecutor): Promise<string[]> {
  const result = await executor.run('ip', ['-j', 'addr', 'show']);
  if (result.exitCode !== 0) {
    throw new TraceInputError(`cannot list this host's addresses (ip -j addr show): ${result.spawnError ?? result.stderr.trim()}`);
  }
  return parseIpAddrJson(result.stdout);
}

export function parseIpAddrJson(text: string): string[] {
  let links: readonly IpAddrJson[];
  try {
    links = JSON.parse(text) as IpAddrJson[];
  } catch {
    throw new TraceInputError('cannot read the output of ip -j addr show (not JSON)');
  }
  const out = new Set<string>();
  for (const link of Array.isArray(links) ? links : []) {
    for (const info of link.addr_info ?? []) {
      const ip = info.local === undefined ? undefined : canonicalIP(info.local);
      if (ip !== undefined) out.add(ip);
    }
  }
  return [...out];
}
