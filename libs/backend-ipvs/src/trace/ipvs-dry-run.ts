/**
 * A snapshot from our IPVS --dry-run block (proxier/dry-run-output.ts): the text after the
 * `# sync …` header, in four sections `# ipvs`, `# ipset`, `# kube-ipvs0` and `# iptables`. The
 * iptables section's own `#` lines (none today) stay iptables-save comments: only the four exact
 * section titles split the text.
 */
import type { IPFamily } from '@kube-proxy/core';
import { DRY_RUN_SECTIONS } from '../proxier/dry-run-output.js';
import { buildIpvsSnapshot, type IpvsSnapshot } from './ipvs-snapshot.js';

export class IpvsDryRunTextError extends Error {
  constructor(why: string) {
    super(`not an IPVS --dry-run block: ${why}`);
    this.name = 'IpvsDryRunTextError';
  }
}

/** The four sections' bodies, by title. */
export function splitIpvsDryRun(text: string): Map<string, string> {
  const titles = new Set<string>(DRY_RUN_SECTIONS);
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (titles.has(line.trimEnd())) {
      current = [];
      sections.set(line.trimEnd(), current);
    } else if (current !== undefined) {
      current.push(line);
    }
  }
  const missing = DRY_RUN_SECTIONS.filter((t) => !sections.has(t));
  if (missing.length > 0) throw new IpvsDryRunTextError(`no ${missing.map((t) => JSON.stringify(t)).join(', ')} section`);
  return new Map([...sections].map(([t, lines]) => [t, lines.join('\n')]));
}

export function ipvsSnapshotFromDryRun(text: string, family: IPFamily): IpvsSnapshot {
  const s = splitIpvsDryRun(text);
  const [ipvs, ipset, link, iptables] = DRY_RUN_SECTIONS.map((t) => s.get(t) ?? '');
  return buildIpvsSnapshot({
    family,
    source: '--dry-run output',
    ipvsadmSave: ipvs as string,
    ipsetSave: ipset as string,
    serviceAddresses: (link as string).split('\n').map((l) => l.trim()).filter((l) => l !== ''),
    iptablesSave: iptables as string,
  });
}
