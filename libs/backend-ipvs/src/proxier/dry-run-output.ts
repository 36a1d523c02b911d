/**
 * The --dry-run text of one IPVS sync of one family, read back from the (in-memory) kernel the
 * proxier just programmed, so it shows what the kernel holds, not what the proxier meant to write:
 *
 *   (the engine's `# sync N full <ISO time>[ IPv4|IPv6]` header comes first)
 *   # ipvs          virtual servers, each followed by its real servers, as `ipvsadm --save -n` prints them
 *   # ipset         `ipset save` lines (create + add) of the family's sets, in catalogue order
 *   # kube-ipvs0    one bound address per line, ADDRESS/32 or ADDRESS/128
 *   # iptables      iptables-save text of the filter and nat tables
 *
 * Every IPVS sync is a full one (upstream has no partial IPVS sync), so the header always says full.
 */
import type { IPFamily } from '@kube-proxy/core';
import { addEntryLine, createSetLine } from '../batch/ipset-text.js';
import { addServerLine, addServiceLine } from '../batch/ipvsadm-text.js';
import type { IpvsKernel } from '../kernel/ipvs-kernel.js';
import { ipsetCatalogue } from '../state/ipset-catalogue.js';

export const DRY_RUN_SECTIONS = ['# ipvs', '# ipset', '# kube-ipvs0', '# iptables'] as const;

function block(title: string, lines: readonly string[]): string {
  return title + '\n' + lines.map((l) => l + '\n').join('');
}

/** The sections of one family's dry-run block; `iptablesSave` is the iptables-save text of filter and nat. */
export async function dryRunKernelText(kernel: IpvsKernel, family: IPFamily, iptablesSave: string): Promise<string> {
  const ipvs: string[] = [];
  for (const vs of await kernel.readVirtualServers(family)) {
    ipvs.push(addServiceLine(vs));
    for (const rs of vs.realServers) ipvs.push(addServerLine(vs, rs));
  }

  const sets = await kernel.readIpsets();
  const ipset: string[] = [];
  for (const def of ipsetCatalogue(family)) {
    const entries = sets.get(def.name);
    if (entries === undefined) continue;
    ipset.push(createSetLine(def));
    for (const e of [...entries].sort()) ipset.push(addEntryLine(def, e));
  }

  const prefix = family === 'IPv6' ? 128 : 32;
  const bound = ((await kernel.readBoundAddresses(family)) ?? []).slice().sort().map((a) => `${a}/${prefix}`);

  const iptables = iptablesSave.split('\n').filter((l) => l !== '');
  return (
    block(DRY_RUN_SECTIONS[0], ipvs) +
    block(DRY_RUN_SECTIONS[1], ipset) +
    block(DRY_RUN_SECTIONS[2], bound) +
    block(DRY_RUN_SECTIONS[3], iptables)
  );
}
