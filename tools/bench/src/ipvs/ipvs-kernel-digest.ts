/**
 * Order-free fingerprints of IPVS kernel state, so the guest can prove it holds exactly what the
 * host rendered without shipping megabytes of read-back text out of the VM: a line count and a
 * sha256 of the sorted lines. `ipvsadm --save -n` prints our `-A`/`-a` lines verbatim in hash-bucket
 * order; `ipset save` adds a kernel-chosen ` bucketsize N initval 0xHEX` to hash sets' create lines
 * (removed here, as in the e2e round trip) and prints the hashsize the set has grown to (a set
 * created with upstream's 1024 doubles as entries arrive: 4096 at 10k), so the hashsize value is
 * not compared either; kube-ipvs0's addresses come from `ip -o addr show`.
 */
import { createHash } from 'node:crypto';

export interface Digest {
  readonly lines: number;
  readonly sha256: string;
}

function digestLines(lines: readonly string[]): Digest {
  const sorted = lines.filter((l) => l.length > 0).sort();
  return { lines: sorted.length, sha256: createHash('sha256').update(sorted.join('\n')).digest('hex') };
}

/** Of an `ipvsadm --restore` batch of `-A`/`-a` lines or of `ipvsadm --save -n` output. */
export function ipvsadmDigest(text: string): Digest {
  return digestLines(text.split('\n'));
}

/** A create line without what the kernel chooses: bucketsize, initval and the grown hashsize. */
export function createLineShape(line: string): string {
  return line.replace(/ bucketsize \d+ initval 0x[0-9a-f]+$/, '').replace(/ hashsize \d+ /, ' hashsize * ');
}

/** Of an `ipset restore` script of create/add lines or of `ipset save` output. */
export function ipsetDigest(text: string): Digest {
  return digestLines(text.split('\n').map((l) => (l.startsWith('create ') ? createLineShape(l) : l)));
}

/** Of a list of plain addresses. */
export function addressDigest(addresses: readonly string[]): Digest {
  return digestLines(addresses);
}

/** The addresses (no prefix length) in `ip -o addr show dev …` output. */
export function addressesOfIpOutput(text: string): string[] {
  const out: string[] = [];
  for (const [, ip] of text.matchAll(/\sinet6? ([0-9a-fA-F.:]+)\//g)) if (ip !== undefined) out.push(ip);
  return out;
}
