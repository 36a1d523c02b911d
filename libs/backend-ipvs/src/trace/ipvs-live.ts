/**
 * readLive of the IPVS tracer: the node's virtual servers (`ipvsadm --save -n`), ipsets
 * (`ipset save`), kube-ipvs0 addresses (`ip -o -f inet|inet6 addr show dev kube-ipvs0`) and nat and
 * filter tables, all through core's CommandExecutor and only ever read. A node without ipvsadm, or
 * with neither a virtual server nor a KUBE- set of the family, holds no IPVS rules.
 */
import type { CommandExecutor, IPFamily, NoRulesFound } from '@kube-proxy/core';
import { isMissingDevice, parseIpAddrShow } from '../kernel/ip-addr.js';
import { parseIpsetSave } from '../kernel/ipset-save.js';
import { parseIpvsadmSave } from '../kernel/ipvsadm-save.js';
import { KUBE_IPVS_DEVICE } from '../kernel/ipvs-kernel.js';
import { buildIpvsSnapshot, type IpvsSnapshot } from './ipvs-snapshot.js';
import { readLiveTables } from './live-iptables.js';

const TIMEOUT_MS = 60_000;

function ownSet(name: string, family: IPFamily): boolean {
  return family === 'IPv6' ? name.startsWith('KUBE-6-') : name.startsWith('KUBE-') && !name.startsWith('KUBE-6-');
}

function lookedFor(family: IPFamily, why: string): NoRulesFound {
  const sets = family === 'IPv6' ? 'KUBE-6-' : 'KUBE-';
  return { found: false, lookedFor: `IPVS virtual servers (ipvsadm --save -n) and ${sets} ipsets (ipset save) of ${family}: ${why}` };
}

async function readServiceAddresses(executor: CommandExecutor, family: IPFamily): Promise<string[]> {
  const r = await executor.run('ip', ['-o', '-f', family === 'IPv4' ? 'inet' : 'inet6', 'addr', 'show', 'dev', KUBE_IPVS_DEVICE], { timeoutMs: TIMEOUT_MS });
  if (r.exitCode !== 0 || r.spawnError !== undefined) {
    if (r.spawnError === undefined && isMissingDevice(r.stderr, KUBE_IPVS_DEVICE)) return [];
    throw new Error(`ip addr show dev ${KUBE_IPVS_DEVICE} failed: ${r.spawnError ?? r.stderr.trim()}`);
  }
  return parseIpAddrShow(r.stdout, family);
}

export async function readIpvsLive(executor: CommandExecutor, family: IPFamily): Promise<IpvsSnapshot | NoRulesFound> {
  const ipvsadm = await executor.run('ipvsadm', ['--save', '-n'], { timeoutMs: TIMEOUT_MS });
  if (ipvsadm.spawnError !== undefined) return lookedFor(family, `ipvsadm cannot be run (${ipvsadm.spawnError})`);
  if (ipvsadm.exitCode !== 0) return lookedFor(family, `ipvsadm --save -n failed: ${ipvsadm.stderr.trim() || `exit ${ipvsadm.exitCode}`}`);
  const ipset = await executor.run('ipset', ['save'], { timeoutMs: TIMEOUT_MS });
  const ipsetText = ipset.exitCode === 0 && ipset.spawnError === undefined ? ipset.stdout : '';
  const hasServers = parseIpvsadmSave(ipvsadm.stdout, family).length > 0;
  const hasSets = [...parseIpsetSave(ipsetText).keys()].some((n) => ownSet(n, family));
  if (!hasServers && !hasSets) return lookedFor(family, 'none found');
  const serviceAddresses = await readServiceAddresses(executor, family);
  const iptables = await readLiveTables(executor, family);
  return buildIpvsSnapshot({
    family,
    source: `ipvsadm --save -n, ipset save, ip addr show dev ${KUBE_IPVS_DEVICE}${iptables.command ? `, ${iptables.command}` : ''}`,
    ipvsadmSave: ipvsadm.stdout,
    ipsetSave: ipsetText,
    serviceAddresses,
    iptablesSave: iptables.tables,
  });
}
