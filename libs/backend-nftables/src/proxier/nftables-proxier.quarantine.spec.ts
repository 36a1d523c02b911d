// Issue 20: a transaction nft refuses on a line of one service port names that Service (log and
// metric) and the others are programmed at once without it; it is tried again when it changes and
// on the next full sync. The in-memory nft refuses the lines of `ns/bad` as nft refused an
// over-long comment (`/dev/stdin:LINE:…: Error: …`).
import type { V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { PromProxyMetrics } from '@kube-proxy/core';
import { makeTestEndpointSlice, makeTestService, newFakeProxier, type FakeProxier } from '../testing/fake-proxier.js';
import { COLD_START_BATCH } from './cold-start.js';
import { FULL_SYNC_PERIOD_MS } from '@kube-proxy/core';
import { defineNftablesModeMetrics } from '../metrics.js';

const METRIC = 'kubeproxy_sync_proxy_rules_nftables_failed_services_total';

function svc(name: string, i: number, port = 80): V1Service {
  return makeTestService('ns', name, (s) => Object.assign(s.spec, { clusterIP: `172.30.${i >> 8}.${i & 255}`, ports: [{ name: 'p', port, protocol: 'TCP' }] }));
}

function eps(name: string, i: number): V1EndpointSlice {
  return makeTestEndpointSlice('ns', name, 1, (e) => {
    e.endpoints = [{ addresses: [`10.1.${i >> 8}.${i & 255}`] }];
    e.ports = [{ name: 'p', port: 80, protocol: 'TCP' }];
  });
}

function setup(): { fp: FakeProxier; metrics: PromProxyMetrics } {
  const metrics = new PromProxyMetrics({ defaultMetrics: false });
  // The metrics the nftables backend defines when it registers.
  defineNftablesModeMetrics(metrics);
  const fp = newFakeProxier('IPv4', { observers: { metrics } });
  fp.nft.refuseLine = (line) => (line.includes('ns/bad') ? 'comment too long, 128 characters maximum allowed' : undefined);
  return { fp, metrics };
}

function add(fp: FakeProxier, name: string, i: number): void {
  fp.proxier.onServiceAdd(svc(name, i));
  fp.proxier.onEndpointSliceAdd(eps(name, i));
}

/** Service ports with a cluster-IP element in the table. */
function programmed(fp: FakeProxier): string[] {
  const map = fp.nft.table.elementsOf('service-ips') ?? new Map<string, string>();
  return [...map.values()].map((body) => /ns\/(\w+)\//.exec(body)?.[1] ?? '?').sort();
}

describe('nftables proxier: a service port nft refuses', () => {
  it('is named in the log and the metric, and the others are programmed in the same sync', async () => {
    const { fp, metrics } = setup();
    add(fp, 'good1', 1);
    add(fp, 'bad', 2);
    add(fp, 'good2', 3);
    await fp.proxier.syncProxyRules();
    expect(programmed(fp)).toEqual(['good1', 'good2']);
    expect(fp.proxier.stats.syncs).toBe(1);
    expect(fp.proxier.stats.failedServicePorts).toBe(1);
    const entry = fp.logger.entries.find((e) => e.message.includes('programming the others without it'));
    expect(entry?.level).toBe('error');
    expect(entry?.meta).toMatchObject({ service: 'ns/bad', servicePort: 'ns/bad:p' });
    expect(String(entry?.meta?.['error'])).toContain('comment too long');
    expect((await metrics.registry.metrics())).toContain(`${METRIC}{ip_family="IPv4"} 1`);
    expect(await metrics.registry.metrics()).toContain('kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"} 1');
  });

  it('leaves out only the refused port when it arrives in a partial sync; the table keeps the others', async () => {
    const { fp } = setup();
    add(fp, 'good1', 1);
    await fp.proxier.syncProxyRules();
    add(fp, 'bad', 2);
    add(fp, 'good2', 3);
    await fp.proxier.syncProxyRules();
    expect(programmed(fp)).toEqual(['good1', 'good2']);
    expect(fp.proxier.stats.syncs).toBe(2);
  });

  it('is left out of later partial syncs without failing them', async () => {
    const { fp } = setup();
    add(fp, 'bad', 2);
    await fp.proxier.syncProxyRules();
    const failures = fp.proxier.stats.transactionFailures;
    add(fp, 'good1', 1);
    await fp.proxier.syncProxyRules();
    expect(programmed(fp)).toEqual(['good1']);
    expect(fp.proxier.stats.transactionFailures).toBe(failures);
  });

  it('is tried again when its Service changes', async () => {
    const { fp } = setup();
    add(fp, 'good1', 1);
    add(fp, 'bad', 2);
    await fp.proxier.syncProxyRules();
    fp.nft.refuseLine = null;
    fp.proxier.onServiceUpdate(svc('bad', 2), svc('bad', 2, 81));
    await fp.proxier.syncProxyRules();
    expect(programmed(fp)).toEqual(['bad', 'good1']);
  });

  it('is tried again on the next full sync (a transient refusal does not exclude it for ever)', async () => {
    const { fp } = setup();
    add(fp, 'good1', 1);
    add(fp, 'bad', 2);
    await fp.proxier.syncProxyRules();
    fp.nft.refuseLine = null;
    await fp.proxier.syncProxyRules();
    expect(programmed(fp)).toEqual(['good1']);
    fp.clock.advance(FULL_SYNC_PERIOD_MS + 1);
    await fp.proxier.syncProxyRules();
    expect(programmed(fp)).toEqual(['bad', 'good1']);
  });

  it('is mapped from a cold-start batch too, where its elements are written in a later transaction', async () => {
    const { fp } = setup();
    // Only the no-endpoint element's comment is refused (as the over-long comment was): the service
    // has no endpoints, so its chains are none and its element goes in the last, elements-only batch.
    fp.nft.refuseLine = (line) => (line.includes('comment "ns/bad') ? 'comment too long, 128 characters maximum allowed' : undefined);
    for (let i = 1; i <= COLD_START_BATCH + 5; i++) {
      if (i === 7) fp.proxier.onServiceAdd(svc('bad', i));
      else add(fp, `good${i}`, i);
    }
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.syncs).toBe(1);
    expect(fp.proxier.stats.failedServicePorts).toBe(1);
    expect(programmed(fp)).toHaveLength(COLD_START_BATCH + 4);
    expect([...(fp.nft.table.elementsOf('no-endpoint-services')?.keys() ?? [])]).toEqual([]);
  });

  it('still fails the sync when the refused line belongs to no service port', async () => {
    const { fp } = setup();
    fp.nft.refuseLine = (line) => (line.includes('add chain ip kube-proxy services') ? 'No such file or directory' : undefined);
    add(fp, 'good1', 1);
    await fp.proxier.syncProxyRules();
    expect(fp.proxier.stats.syncs).toBe(0);
    expect(fp.proxier.stats.failedServicePorts).toBe(0);
    expect(fp.logger.entries.some((e) => e.level === 'error' && e.message === 'nftables sync failed')).toBe(true);
  });
});
