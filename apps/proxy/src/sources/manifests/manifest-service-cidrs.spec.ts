import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nullLogger, type Logger } from '@kube-proxy/core';
import { ManifestSource, type ManifestHandlers } from './manifest-source.js';

// ServiceCIDRs from manifests: one complete list to the handler, on start and on every reload that changes it.

const serviceCIDR = (name: string, cidrs: unknown, labels: Record<string, string> = {}) => `
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: ${name}, labels: ${JSON.stringify(labels)}}
spec: {cidrs: ${JSON.stringify(cidrs)}}
`;

function handlers(events: string[], withCIDRs = true): ManifestHandlers {
  const none = () => undefined;
  return {
    services: { onServiceAdd: none, onServiceUpdate: none, onServiceDelete: none, onServicesSynced: () => void events.push('svc synced') },
    endpointSlices: { onEndpointSliceAdd: none, onEndpointSliceUpdate: none, onEndpointSliceDelete: none, onEndpointSlicesSynced: none },
    node: { onNodeAdd: none, onNodeUpdate: none, onNodeDelete: none, onNodeSynced: none },
    ...(withCIDRs ? { serviceCIDRs: { onServiceCIDRsChanged: (cidrs: readonly string[]) => void events.push(`cidrs ${cidrs.join(',')}`) } } : {}),
  };
}

describe('ManifestSource ServiceCIDRs', () => {
  let dir: string;
  const warnings: Array<{ msg: string; meta?: Record<string, unknown> }> = [];
  const logger: Logger = { ...nullLogger, warn: (msg, meta) => void warnings.push({ msg, ...(meta ? { meta } : {}) }), child: () => logger };
  const sources: ManifestSource[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-servicecidrs-'));
    warnings.length = 0;
  });
  afterEach(async () => {
    for (const s of sources.splice(0)) s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function started(events: string[], opts: { withCIDRs?: boolean; serviceProxyName?: string } = {}) {
    const s = new ManifestSource({ path: dir, nodeName: 'node-1', serviceProxyName: opts.serviceProxyName ?? '', logger, pollIntervalMs: 60_000 });
    sources.push(s);
    await s.loadInitial();
    s.start(handlers(events, opts.withCIDRs ?? true));
    return s;
  }

  it('delivers the initial list once, after the initial Synced calls: all objects, de-duplicated and sorted', async () => {
    await writeFile(join(dir, 'a.yaml'), serviceCIDR('kubernetes', ['10.96.0.0/12', 'fd00:10:96::/112']) + '---\n' + serviceCIDR('extra', ['10.100.0.0/16']));
    // Other service-proxy-names do not apply: every ServiceCIDR counts, as upstream watches them all.
    await writeFile(join(dir, 'b.yaml'), serviceCIDR('same', ['10.96.0.0/12'], { 'service.kubernetes.io/service-proxy-name': 'other' }));
    const events: string[] = [];
    const s = await started(events);
    expect(events).toEqual(['svc synced', 'cidrs 10.100.0.0/16,10.96.0.0/12,fd00:10:96::/112']);
    expect(s.counts()).toEqual({ Service: 0, EndpointSlice: 0, Node: 0, ServiceCIDR: 3 });
    expect(warnings).toEqual([]);
  });

  it('says nothing when there are no ServiceCIDRs, or when the handler does not take them', async () => {
    const events: string[] = [];
    await started(events);
    await writeFile(join(dir, 'a.yaml'), serviceCIDR('kubernetes', ['10.96.0.0/12']));
    const without: string[] = [];
    const s = await started(without, { withCIDRs: false });
    await s.rescan();
    expect(events).toEqual(['svc synced']);
    expect(without).toEqual(['svc synced']);
  });

  it('follows file changes: one list per reload that changes it, nothing for reloads that do not', async () => {
    const file = join(dir, 'cidrs.yaml');
    await writeFile(file, serviceCIDR('kubernetes', ['10.96.0.0/12']));
    const events: string[] = [];
    const s = await started(events);
    events.length = 0;
    // Add: a second object in the same file, and a third in a new file, in one reload.
    await writeFile(file, serviceCIDR('kubernetes', ['10.96.0.0/12']) + '---\n' + serviceCIDR('second', ['10.200.0.0/16']));
    await writeFile(join(dir, 'more.yaml'), serviceCIDR('third', ['fd00::/112']));
    await s.rescan();
    // Update to the same CIDRs (a label only): the list is unchanged.
    await writeFile(file, serviceCIDR('kubernetes', ['10.96.0.0/12'], { a: 'b' }) + '---\n' + serviceCIDR('second', ['10.200.0.0/16']));
    await s.rescan();
    // Update that changes the CIDRs.
    await writeFile(file, serviceCIDR('kubernetes', ['10.96.0.0/12']) + '---\n' + serviceCIDR('second', ['10.201.0.0/16']));
    await s.rescan();
    // Delete.
    await unlink(join(dir, 'more.yaml'));
    await s.rescan();
    await writeFile(file, '');
    await s.rescan();
    expect(events).toEqual([
      'cidrs 10.200.0.0/16,10.96.0.0/12,fd00::/112',
      'cidrs 10.201.0.0/16,10.96.0.0/12,fd00::/112',
      'cidrs 10.201.0.0/16,10.96.0.0/12',
      'cidrs ',
    ]);
  });

  it('skips a malformed ServiceCIDR with one warning naming it; the others keep working', async () => {
    await writeFile(
      join(dir, 'a.yaml'),
      [
        serviceCIDR('kubernetes', ['10.96.0.0/12']),
        serviceCIDR('no-list', '10.97.0.0/16'),
        serviceCIDR('three', ['10.1.0.0/16', 'fd00::/112', '10.2.0.0/16']),
        serviceCIDR('not-cidr', ['10.98.0.0']),
        'apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: missing}\nspec: {}\n',
        'apiVersion: networking.k8s.io/v1beta1\nkind: ServiceCIDR\nmetadata: {name: old-version}\nspec: {cidrs: [10.99.0.0/16]}\n',
      ].join('---\n'),
    );
    const events: string[] = [];
    const s = await started(events);
    expect(events).toEqual(['svc synced', 'cidrs 10.96.0.0/12']);
    expect(warnings.map((w) => `${w.msg}: ${String(w.meta?.['object'] ?? w.meta?.['err'])}`)).toEqual([
      'Skipping malformed object in manifest file: ServiceCIDR must have apiVersion networking.k8s.io/v1, got "networking.k8s.io/v1beta1"',
      'Skipping invalid ServiceCIDR: no-list',
      'Skipping invalid ServiceCIDR: three',
      'Skipping invalid ServiceCIDR: not-cidr',
      'Skipping invalid ServiceCIDR: missing',
    ]);
    // An unchanged file re-read logs nothing again.
    await s.rescan();
    expect(warnings).toHaveLength(5);
  });
});
