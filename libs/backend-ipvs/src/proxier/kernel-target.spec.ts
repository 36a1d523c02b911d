import type { RealServer, VirtualServer } from '../state/ipvs-state.js';
import type { IpvsConnections } from '../kernel/ipvs-kernel.js';
import { gracefulTerminationNeeded, kernelTarget } from './kernel-target.js';

function rs(address: string, weight = 1): RealServer {
  return { address, port: 8080, weight, key: `${address}:8080` };
}
function vs(protocol: VirtualServer['protocol'], address: string, servers: RealServer[]): VirtualServer {
  return { protocol, address, port: 80, scheduler: 'rr', flags: [], persistenceTimeout: 0, realServers: servers, key: `${address}:80/${protocol}` };
}
function conns(entries: Array<[string, string, number, number]>): () => Promise<IpvsConnections> {
  const m = new Map<string, Map<string, { active: number; inactive: number }>>();
  for (const [v, r, active, inactive] of entries) {
    if (!m.has(v)) m.set(v, new Map());
    m.get(v)!.set(r, { active, inactive });
  }
  return async () => m;
}
const none = conns([]);

/** A connections reader that counts its calls (no jest globals in these ESM specs). */
function counting(read: () => Promise<IpvsConnections>): { read: () => Promise<IpvsConnections>; calls: () => number } {
  let n = 0;
  return { read: () => (n++, read()), calls: () => n };
}

describe('kernelTarget (graceful termination, exclude CIDRs)', () => {
  it('is the desired state when the kernel already holds it', async () => {
    const want = [vs('TCP', '10.96.0.10', [rs('10.244.1.5')])];
    const t = await kernelTarget({ desired: want, current: want, excludeCIDRs: [], connections: none });
    expect(t).toEqual({ virtualServers: want, terminating: [], drained: [] });
  });

  it('keeps a removed TCP real server at weight 0 while it has connections, active or inactive', async () => {
    const current = [vs('TCP', '10.96.0.10', [rs('10.244.1.5'), rs('10.244.2.6')])];
    const desired = [vs('TCP', '10.96.0.10', [rs('10.244.2.6')])];
    for (const [active, inactive] of [[1, 0], [0, 3]]) {
      const t = await kernelTarget({ desired, current, excludeCIDRs: [], connections: conns([['10.96.0.10:80/TCP', '10.244.1.5:8080', active, inactive]]) });
      expect(t.virtualServers[0].realServers).toEqual([rs('10.244.1.5', 0), rs('10.244.2.6')]);
      expect(t.terminating).toEqual(['10.96.0.10:80/TCP -> 10.244.1.5:8080']);
    }
  });

  it('deletes a removed TCP real server once it has no connections left', async () => {
    const current = [vs('TCP', '10.96.0.10', [rs('10.244.1.5', 0), rs('10.244.2.6')])];
    const desired = [vs('TCP', '10.96.0.10', [rs('10.244.2.6')])];
    const t = await kernelTarget({ desired, current, excludeCIDRs: [], connections: conns([['10.96.0.10:80/TCP', '10.244.1.5:8080', 0, 0]]) });
    expect(t.virtualServers).toEqual(desired);
    expect(t.drained).toEqual(['10.96.0.10:80/TCP -> 10.244.1.5:8080']);
  });

  it('deletes removed UDP and SCTP real servers at once, without reading connections', async () => {
    const { read, calls } = counting(none);
    for (const p of ['UDP', 'SCTP'] as const) {
      const t = await kernelTarget({
        desired: [vs(p, '10.96.0.10', [])],
        current: [vs(p, '10.96.0.10', [rs('10.244.1.5')])],
        excludeCIDRs: [],
        connections: read,
      });
      expect(t.virtualServers[0].realServers).toEqual([]);
      expect(t.terminating).toEqual([]);
    }
    expect(calls()).toBe(0);
    expect(gracefulTerminationNeeded('TCP')).toBe(true);
  });

  it('gives weight 1 back to a desired real server the kernel has at weight 0 (restart, endpoint back)', async () => {
    const desired = [vs('TCP', '10.96.0.10', [rs('10.244.1.5')])];
    const t = await kernelTarget({ desired, current: [vs('TCP', '10.96.0.10', [rs('10.244.1.5', 0)])], excludeCIDRs: [], connections: none });
    expect(t.virtualServers).toEqual(desired);
  });

  it('drops virtual servers nobody wants except those inside --ipvs-exclude-cidrs', async () => {
    const other = vs('TCP', '192.168.50.7', [rs('192.168.60.1')]);
    const stale = vs('TCP', '10.96.0.99', [rs('10.244.1.5')]);
    const t = await kernelTarget({ desired: [], current: [other, stale], excludeCIDRs: ['192.168.50.0/24'], connections: none });
    expect(t.virtualServers).toEqual([other]);
  });

  it('reads connections once per sync, however many real servers leave', async () => {
    const { read, calls } = counting(conns([['10.96.0.10:80/TCP', '10.244.1.5:8080', 1, 0]]));
    await kernelTarget({
      desired: [vs('TCP', '10.96.0.10', []), vs('TCP', '10.96.0.11', [])],
      current: [vs('TCP', '10.96.0.10', [rs('10.244.1.5'), rs('10.244.1.6')]), vs('TCP', '10.96.0.11', [rs('10.244.1.7')])],
      excludeCIDRs: [],
      connections: read,
    });
    expect(calls()).toBe(1);
  });
});
