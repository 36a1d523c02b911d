import type { BackendPlugin, CommandExecutor, IPFamily, ModeTracer, RuleSnapshot } from '@kube-proxy/core';
import { LIVE_DETECTION_ORDER, readLiveRules, tracerOf, type TracerLookup } from './live-rules.js';
import { TraceInputError } from './trace-packet.js';

const executor: CommandExecutor = { run: () => Promise.reject(new Error('not used')) };

/** A backend whose tracer finds rules only for the families in `holds`, recording what was read. */
function backend(name: string, holds: IPFamily[], reads: string[], opts: { throws?: boolean; tracer?: boolean } = {}): BackendPlugin {
  const tracer: ModeTracer = {
    mode: name,
    readLive: (_e, family) => {
      reads.push(`${name} ${family}`);
      if (opts.throws) return Promise.reject(new Error(`${name}-save: not found`));
      return Promise.resolve(holds.includes(family) ? ({ mode: name, family, source: `${name}-save` } as RuleSnapshot) : { found: false, lookedFor: `${name} tables` });
    },
    fromDryRun: () => ({ mode: name, family: 'IPv4', source: '' }),
    trace: () => {
      throw new Error('not used');
    },
    objectsOf: () => [],
  };
  return {
    apiVersion: 'kube-proxy.backend/v1',
    name,
    version: '1',
    detect: () => ({ usable: true, reason: '' }),
    register: () => undefined,
    ...(opts.tracer === false ? {} : { tracer }),
  };
}

function lookup(...plugins: BackendPlugin[]): TracerLookup {
  return { get: (n) => plugins.find((p) => p.name === n), all: () => plugins };
}

describe('readLiveRules', () => {
  it('detects the mode: nftables, then ipvs, then iptables, then userspace; the first whose rules are there', async () => {
    expect(LIVE_DETECTION_ORDER).toEqual(['nftables', 'ipvs', 'iptables', 'userspace']);
    const reads: string[] = [];
    const backends = lookup(backend('iptables', ['IPv4'], reads), backend('userspace', ['IPv4'], reads), backend('ipvs', [], reads, { throws: true }), backend('nftables', ['IPv6'], reads));
    const live = await readLiveRules(backends, '', executor, 'IPv4', () => true);
    expect(live.mode).toBe('iptables');
    expect(live.snapshot.source).toBe('iptables-save');
    expect(reads).toEqual(['nftables IPv4', 'ipvs IPv4', 'iptables IPv4']);
    expect((await readLiveRules(backends, 'auto', executor, 'IPv6', () => true)).mode).toBe('nftables');
  });

  it('IPVS is not read while the ip_vs module is not loaded (ipvsadm would load it)', async () => {
    const reads: string[] = [];
    const backends = lookup(backend('ipvs', ['IPv4'], reads), backend('iptables', ['IPv4'], reads));
    expect((await readLiveRules(backends, '', executor, 'IPv4', () => false)).mode).toBe('iptables');
    expect(reads).toEqual(['iptables IPv4']);
    await expect(readLiveRules(backends, 'ipvs', executor, 'IPv4', () => false)).rejects.toThrow(
      'no ipvs rules found on this node for IPv4: looked for /proc/net/ip_vs (the ip_vs module is not loaded, so no virtual server exists)',
    );
    expect((await readLiveRules(backends, 'ipvs', executor, 'IPv4', () => true)).mode).toBe('ipvs');
  });

  it('nothing anywhere: says what each mode looked for', async () => {
    const reads: string[] = [];
    const backends = lookup(backend('iptables', [], reads), backend('nftables', [], reads), backend('ipvs', [], reads, { throws: true }), backend('plain', [], reads, { tracer: false }));
    await expect(readLiveRules(backends, '', executor, 'IPv4', () => true)).rejects.toThrow(
      new TraceInputError('no kube-proxy rules found on this node for IPv4: looked for nftables: nftables tables; ipvs: ipvs-save: not found; iptables: iptables tables'),
    );
  });

  it('--proxy-mode: that mode only, its own lookedFor when empty; unknown or untraceable modes refused', async () => {
    const reads: string[] = [];
    const backends = lookup(backend('iptables', ['IPv4'], reads), backend('nftables', [], reads), backend('plain', [], reads, { tracer: false }));
    expect((await readLiveRules(backends, 'iptables', executor, 'IPv4')).mode).toBe('iptables');
    await expect(readLiveRules(backends, 'nftables', executor, 'IPv4')).rejects.toThrow('no nftables rules found on this node for IPv4: looked for nftables tables');
    expect(reads).toEqual(['iptables IPv4', 'nftables IPv4']);
    expect(() => tracerOf(backends, 'plain')).toThrow('proxy mode "plain" cannot trace packets (its backend has no tracer)');
    expect(() => tracerOf(backends, 'bpf')).toThrow('unknown proxy mode "bpf"; registered modes: iptables, nftables, plain');
  });
});
