import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastSyncNote, lastSyncSeconds, metricsURL } from './last-sync.js';

function serve(body: string): Promise<Server> {
  const server = createServer((_req, res) => res.end(body));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('the last sync of the proxy on this node', () => {
  it('reads the newest kubeproxy_sync_proxy_rules_last_timestamp_seconds of any family', () => {
    const text = [
      '# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds The last time proxy rules were successfully synced',
      'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1700000000.5',
      'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} 1700000100',
      'kubeproxy_sync_proxy_rules_duration_seconds_count 3',
    ].join('\n');
    expect(lastSyncSeconds(text)).toBe(1700000100);
    expect(lastSyncSeconds('kubeproxy_sync_proxy_rules_last_timestamp_seconds 0\n')).toBeUndefined();
  });

  it('asks loopback for a wildcard bind address', () => {
    expect(metricsURL('0.0.0.0:10249')).toBe('http://127.0.0.1:10249/metrics');
    expect(metricsURL('[::]:10249')).toBe('http://[::1]:10249/metrics');
    expect(metricsURL('127.0.0.1:10249')).toBe('http://127.0.0.1:10249/metrics');
  });

  it('says since when, how long ago, and where it asked', async () => {
    const server = await serve('kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1700000000\n');
    try {
      const port = (server.address() as AddressInfo).port;
      const note = await lastSyncNote(`127.0.0.1:${port}`, new Date(1700000090_000));
      expect(note).toBe(`the proxy has not synced since 2023-11-14T22:13:20.000Z (90 s ago, kubeproxy_sync_proxy_rules_last_timestamp_seconds at http://127.0.0.1:${port}/metrics)`);
    } finally {
      server.close();
    }
  });

  it('says so when no proxy answers or it has never synced', async () => {
    const never = await serve('# nothing yet\n');
    try {
      const port = (never.address() as AddressInfo).port;
      expect(await lastSyncNote(`127.0.0.1:${port}`)).toMatch(/reports no successful sync yet/);
    } finally {
      never.close();
    }
    const closed = await serve('');
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await lastSyncNote(`127.0.0.1:${port}`)).toBe(`no proxy answered at http://127.0.0.1:${port}/metrics: the rules may be left by a proxy that is not running`);
  });
});
