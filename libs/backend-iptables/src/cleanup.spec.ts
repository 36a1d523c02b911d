import { nullLogger } from '@kube-proxy/core';
import { cleanupIptables } from './cleanup.js';
import { DryRunIptables } from '@kube-proxy/core';
import { JUMP_CHAINS, jumpRuleArgs, KUBELET_JUMP_CHAINS } from './render/index.js';

const NAT_STATE = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-EXT-XPGD46QRK7WJZT7O - [0:0]
:CNI-HOSTPORT - [0:0]
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SVC-XPGD46QRK7WJZT7O -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -s 10.180.0.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
-A KUBE-EXT-XPGD46QRK7WJZT7O -j KUBE-SVC-XPGD46QRK7WJZT7O
-A CNI-HOSTPORT -j RETURN
-A POSTROUTING -j CNI-HOSTPORT
COMMIT
*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-FIREWALL - [0:0]
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
COMMIT
`;

async function programmed(): Promise<DryRunIptables> {
  const ipt = new DryRunIptables('IPv4');
  for (const jump of [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS]) {
    await ipt.ensureChain(jump.table, jump.dstChain);
    await ipt.ensureRule('-I', jump.table, jump.srcChain, jumpRuleArgs(jump));
  }
  for (const table of ['mangle', 'nat', 'filter'] as const) await ipt.ensureChain(table, 'KUBE-PROXY-CANARY');
  await ipt.restore(NAT_STATE, { noFlush: true, counters: true });
  return ipt;
}

describe('cleanupIptables', () => {
  it('removes every jump rule and every chain it owns, leaving other rules and kubelet chains', async () => {
    const ipt = await programmed();
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    const t = ipt.tables;
    expect(t.chains('nat')).toEqual(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING', 'CNI-HOSTPORT']);
    expect(t.rules('nat', 'POSTROUTING')).toEqual(['-j CNI-HOSTPORT']);
    expect(t.rules('nat', 'PREROUTING')).toEqual([]);
    expect(t.chains('filter')).toEqual(['INPUT', 'FORWARD', 'OUTPUT', 'KUBE-FIREWALL']);
    // kubelet's jumps to KUBE-FIREWALL are not ours to remove (upstream leaves them too).
    expect(t.rules('filter', 'INPUT')).toEqual(['-j KUBE-FIREWALL']);
    expect(t.chains('mangle')).toEqual(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
  });

  it('is safe on a clean node and idempotent', async () => {
    const clean = new DryRunIptables('IPv4');
    expect(await cleanupIptables(clean, nullLogger)).toBe(false);
    expect(clean.tables.tableNames()).toEqual([]);

    const ipt = await programmed();
    await cleanupIptables(ipt, nullLogger);
    const after = ipt.tables.saveAll();
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(ipt.tables.saveAll()).toBe(after);
  });

  it('leaves an owned chain that a foreign rule still references (instead of failing the whole table)', async () => {
    const ipt = await programmed();
    await ipt.ensureRule('-A', 'nat', 'CNI-HOSTPORT', ['-j', 'KUBE-MARK-MASQ']);
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(ipt.tables.chainExists('nat', 'KUBE-MARK-MASQ')).toBe(true);
    expect(ipt.tables.rules('nat', 'KUBE-MARK-MASQ')).toEqual(['-j MARK --or-mark 0x4000']);
    expect(ipt.tables.chainExists('nat', 'KUBE-SERVICES')).toBe(false);
    expect(ipt.tables.chainExists('nat', 'KUBE-SEP-SXIVWICOYRO3J4NJ')).toBe(false);
  });

  it('removes duplicated jump rules', async () => {
    const ipt = await programmed();
    const jump = JUMP_CHAINS.find((j) => j.table === 'nat' && j.srcChain === 'PREROUTING');
    await ipt.restore(
      '*nat\n-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\nCOMMIT\n',
      { noFlush: true, counters: true },
    );
    expect(ipt.tables.rules('nat', 'PREROUTING')).toHaveLength(2);
    expect(jump?.dstChain).toBe('KUBE-SERVICES');
    expect(await cleanupIptables(ipt, nullLogger)).toBe(false);
    expect(ipt.tables.rules('nat', 'PREROUTING')).toEqual([]);
    expect(ipt.tables.chainExists('nat', 'KUBE-SERVICES')).toBe(false);
  });
});
