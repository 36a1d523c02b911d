import { readFileSync } from 'node:fs';
import type { Provider, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { BACKEND_PLUGIN_API_VERSION, CLOCK, COMMAND_EXECUTOR, DualStackProvider, LOGGER, PROVIDER, SYSCTL } from '@kube-proxy/core';
import { FakeClock, FakeCommandExecutor, FakeSysctl, fakeContainer, RecordingLogger, settle, TEST_HOST, testContext } from '@kube-proxy/core/testing';
import defaultExport, { nftablesBackend } from './index.js';
import { NftablesProxier } from './proxier/nftables-proxier.js';

function container(executor = new FakeCommandExecutor()) {
  return fakeContainer([
    [LOGGER, new RecordingLogger()],
    [CLOCK, new FakeClock()],
    [COMMAND_EXECUTOR, executor],
    [SYSCTL, new FakeSysctl()],
  ]);
}

const WEB: V1Service = {
  metadata: { namespace: 'default', name: 'web' },
  spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
};
const WEB_EPS: V1EndpointSlice = {
  metadata: { namespace: 'default', name: 'web-1', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }],
};

describe('nftablesBackend', () => {
  it('is the default export and declares the contract version, name and package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(defaultExport).toBe(nftablesBackend);
    expect(nftablesBackend.apiVersion).toBe(BACKEND_PLUGIN_API_VERSION);
    expect(nftablesBackend.name).toBe('nftables');
    expect(nftablesBackend.version).toBe(pkg.version);
  });

  it('detect: follows the host capability verdict (nft >= 1.0.1, kernel >= 5.13, nft --check)', async () => {
    expect(await nftablesBackend.detect({ ...TEST_HOST, nftables: { available: true, reason: 'nftables available' } })).toEqual({ usable: true, reason: 'nftables available' });
    expect((await nftablesBackend.detect(TEST_HOST)).usable).toBe(false);
  });

  it('register: one proxier per family, a DualStackProvider over two', async () => {
    const one = container();
    await nftablesBackend.register(one.container, testContext({ families: ['IPv4'] }));
    expect(one.values.get(PROVIDER)).toBeInstanceOf(NftablesProxier);
    const two = container();
    await nftablesBackend.register(two.container, testContext({ families: ['IPv4', 'IPv6'] }));
    expect(two.values.get(PROVIDER)).toBeInstanceOf(DualStackProvider);
  });

  it('--dry-run: prints the table after a "# sync" line and never runs nft', async () => {
    const exec = new FakeCommandExecutor();
    const c = container(exec);
    const ctx = testContext({ families: ['IPv4'], dryRun: true, nodeIPs: { IPv4: '192.168.0.2' } });
    await nftablesBackend.register(c.container, ctx);
    const provider = c.values.get(PROVIDER) as Provider;
    const loop = provider.syncLoop();
    provider.onServiceAdd(WEB);
    provider.onEndpointSliceAdd(WEB_EPS);
    provider.onServicesSynced();
    provider.onEndpointSlicesSynced();
    await provider.firstSync();
    await settle();
    provider.stop();
    await loop;
    const out = ctx.dryRunSink.text;
    expect(out).toMatch(/^# sync 1 full \S+\n/);
    expect(out).toContain('add table ip kube-proxy { comment "rules for kube-proxy" ; }\n');
    expect(out).toContain('add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto service-');
    expect(out).toContain('meta l4proto tcp dnat to 10.244.1.5:8080');
    expect(exec.commandLines().filter((l) => l.startsWith('nft'))).toEqual([]);
  });

  it('cleanup: deletes both tables; nothing in --dry-run or without an nft binary', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    const present = { ...TEST_HOST, tools: { ...TEST_HOST.tools, nft: { present: true, version: 'v1.0.6' } } };
    await nftablesBackend.cleanup!(container(exec).container, testContext({ host: present, dryRun: false }));
    expect(exec.commandLines()).toEqual(['nft delete table ip kube-proxy', 'nft delete table ip6 kube-proxy']);
    const none = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    await nftablesBackend.cleanup!(container(none).container, testContext({ host: present, dryRun: true }));
    await nftablesBackend.cleanup!(container(none).container, testContext({ host: { ...TEST_HOST, tools: { ...TEST_HOST.tools, nft: { present: false } } }, dryRun: false }));
    expect(none.calls).toEqual([]);
  });

  it('cleanup: a failure other than "no such table" fails the cleanup', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Operation not permitted' });
    const present = { ...TEST_HOST, tools: { ...TEST_HOST.tools, nft: { present: true } } };
    await expect(nftablesBackend.cleanup!(container(exec).container, testContext({ host: present, dryRun: false }))).rejects.toThrow(/nftables backend/);
  });
});
