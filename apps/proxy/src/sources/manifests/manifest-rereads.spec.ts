import { mkdtemp, rename, rm, writeFile, unlink } from 'node:fs/promises';
import * as realFs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { RecordingLogger } from '@kube-proxy/core/testing';
import * as realParse from './parse-manifests.js';
import type { ManifestHandlers, ManifestSourceOptions } from './manifest-source.js';

// Every file read and every parse the source does, by file name: the real functions, counted.
// (@types/jest does not declare ESM module mocking, which Jest provides in this ESM setup.)
const { jest } = import.meta as unknown as { jest: { unstable_mockModule(path: string, factory: () => unknown): void } };
const reads: string[] = [];
const parses: string[] = [];
jest.unstable_mockModule('node:fs/promises', () => ({
  ...realFs,
  default: realFs,
  readFile: (file: string, ...rest: unknown[]) => {
    reads.push(basename(String(file)));
    return (realFs.readFile as (...a: unknown[]) => Promise<unknown>)(file, ...rest);
  },
}));
jest.unstable_mockModule('./parse-manifests.js', () => ({
  ...realParse,
  parseManifestText: (text: string, file: string) => {
    parses.push(basename(file));
    return realParse.parseManifestText(text, file);
  },
}));
const { ManifestSource } = await import('./manifest-source.js');

const svc = (name: string, ip: string, port = 80) =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\nspec: {clusterIP: ${ip}, ports: [{port: ${port}, protocol: TCP}]}\n`;

function recorder(): { events: string[]; handlers: ManifestHandlers } {
  const events: string[] = [];
  const noop = () => undefined;
  return {
    events,
    handlers: {
      services: {
        onServiceAdd: (s) => void events.push(`+${s.metadata?.name}`),
        onServiceUpdate: (_a, b) => void events.push(`~${b.metadata?.name}:${b.spec?.ports?.[0]?.port}`),
        onServiceDelete: (s) => void events.push(`-${s.metadata?.name}`),
        onServicesSynced: noop,
      },
      endpointSlices: { onEndpointSliceAdd: noop, onEndpointSliceUpdate: noop, onEndpointSliceDelete: noop, onEndpointSlicesSynced: noop },
      node: { onNodeAdd: noop, onNodeUpdate: noop, onNodeDelete: noop, onNodeSynced: noop },
    },
  };
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('ManifestSource: work only for what changed', () => {
  let dir: string;
  let logger: RecordingLogger;
  const sources: { stop(): void }[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-rereads-'));
    logger = new RecordingLogger();
    reads.length = 0;
    parses.length = 0;
  });
  afterEach(async () => {
    for (const s of sources.splice(0)) s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function started(extra: Partial<ManifestSourceOptions> = {}) {
    const s = new ManifestSource({ path: dir, nodeName: 'node-1', serviceProxyName: '', logger, pollIntervalMs: 60_000, settleMs: 20, ...extra });
    sources.push(s);
    await s.loadInitial();
    const r = recorder();
    s.start(r.handlers);
    r.events.length = 0;
    reads.length = 0;
    parses.length = 0;
    return { s, events: r.events };
  }

  it('reads and parses no file again over many poll intervals when nothing changed', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('a', '10.96.0.1'));
    await writeFile(join(dir, 'b.yaml'), svc('b', '10.96.0.2'));
    const { s, events } = await started({ pollIntervalMs: 20 });
    await sleep(400); // ~20 poll intervals
    await s.rescan(); // and explicit checks
    await s.rescan();
    expect({ reads, parses, events }).toEqual({ reads: [], parses: [], events: [] });
  });

  it('re-reads and re-parses only the one of two files that changed, and delivers only its change', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('a', '10.96.0.1'));
    await writeFile(join(dir, 'b.yaml'), svc('b', '10.96.0.2') + '---\n' + svc('c', '10.96.0.3'));
    const { s, events } = await started();
    await writeFile(join(dir, 'b.yaml'), svc('b', '10.96.0.2', 81) + '---\n' + svc('c', '10.96.0.3'));
    await s.rescan();
    expect({ reads, parses, events }).toEqual({ reads: ['b.yaml'], parses: ['b.yaml'], events: ['~b:81'] });
  });

  it('reads a file written in two steps once it is complete: no deletion of what the first step left out', async () => {
    const file = join(dir, 'a.yaml');
    const complete = (port: number) => [svc('x', '10.96.0.1', port), svc('y', '10.96.0.2'), svc('z', '10.96.0.3')].join('---\n');
    await writeFile(file, complete(80));
    let step = 0;
    // The writer's second step lands while the source waits for the file to settle.
    const settle = async () => {
      if (step++ === 0) await writeFile(file, complete(81));
    };
    const { s, events } = await started({ sleep: settle });
    // The first step: truncated, then only the first document written (valid YAML on its own).
    await writeFile(file, svc('x', '10.96.0.1', 81));
    await s.rescan();
    expect(events).toEqual(['~x:81']);
    expect(parses).toEqual(['a.yaml']);
  });

  it('tries a file that stopped parsing again only once it changes: one error, its objects kept', async () => {
    const file = join(dir, 'a.yaml');
    await writeFile(file, svc('a', '10.96.0.1'));
    const { s, events } = await started({ pollIntervalMs: 20 });
    await writeFile(file, 'apiVersion: v1\nkind: Service\nmetadata: {name: [unclosed\n');
    await s.rescan();
    await sleep(300); // ~15 poll intervals
    expect(logger.messages('error')).toEqual(['Cannot read manifest file; keeping its previous objects']);
    expect({ parses, events }).toEqual({ parses: ['a.yaml'], events: [] });
    await writeFile(file, svc('a', '10.96.0.1', 81));
    await s.rescan();
    expect(events).toEqual(['~a:81']);
  });

  it('tells of an object defined in two files once, serves the later file, and falls back to the earlier one', async () => {
    await writeFile(join(dir, 'a.yaml'), svc('web', '10.96.0.1', 80));
    await writeFile(join(dir, 'b.yaml'), svc('web', '10.96.0.1', 81));
    const { s, events } = await started({ pollIntervalMs: 20 });
    await sleep(200);
    await s.rescan();
    expect(logger.messages('warn').filter((m) => m.includes('several manifest files'))).toHaveLength(1);
    expect(events).toEqual([]);
    await unlink(join(dir, 'b.yaml'));
    await s.rescan();
    expect(events).toEqual(['~web:80']);
  });

  it('follows a single manifest file through atomic replacements (write elsewhere, rename over it) by its watch', async () => {
    const file = join(dir, 'cluster.yaml');
    await writeFile(file, svc('web', '10.96.0.1', 80));
    // The periodic check is out of the picture: only the filesystem watch can tell.
    const s = new ManifestSource({ path: file, nodeName: 'node-1', serviceProxyName: '', logger, pollIntervalMs: 600_000, settleMs: 20 });
    sources.push(s);
    await s.loadInitial();
    const r = recorder();
    s.start(r.handlers);
    for (const port of [81, 82, 83]) {
      await writeFile(join(dir, 'cluster.yaml.tmp'), svc('web', '10.96.0.1', port));
      await rename(join(dir, 'cluster.yaml.tmp'), file);
      const deadline = Date.now() + 1200;
      while (!r.events.includes(`~web:${port}`) && Date.now() < deadline) await sleep(20);
    }
    expect(r.events).toEqual(['+web', '~web:81', '~web:82', '~web:83']);
  });
});
