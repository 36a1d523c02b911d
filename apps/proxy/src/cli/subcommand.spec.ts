import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSubcommand } from './subcommand.js';
import { captureIO } from './testing/capture-io.js';

// Each runs the CLI in-process (host detection, the source, a sync): seconds on a busy machine.
const SLOW = 60_000;

const EXAMPLES = fileURLToPath(new URL('../../../../examples', import.meta.url));

describe('runSubcommand', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-sub-'));
  }, SLOW);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('bad input is one line on stderr, also when what was looked for quotes a multi-line tool error', async () => {
    const plugin = join(dir, 'noisy.mjs');
    await writeFile(
      plugin,
      `export const backend = { apiVersion: 'kube-proxy.backend/v1', name: 'noisy', version: '1.0.0', detect: () => ({ usable: true, reason: '' }), register() {},
        tracer: { mode: 'noisy', readLive: async () => ({ found: false, lookedFor: 'noisy-save: failed:\\nmodprobe: FATAL\\n  Can not initialize' }),
          fromDryRun() {}, trace() {}, objectsOf: () => [] } };`,
    );
    const t = captureIO();
    expect(await runSubcommand('trace', [`--backend-plugin=${plugin}`, '--proxy-mode=noisy', '--live', '--from=1.2.3.4', '--to=10.96.0.10:80'], t.streams)).toBe(1);
    expect(t.out()).toBe('');
    expect(t.err()).toBe('kube-proxy trace: no noisy rules found on this node for IPv4: looked for noisy-save: failed: modprobe: FATAL Can not initialize\n');
  }, SLOW);

  it('a configuration error: one line, exit 1', async () => {
    const t = captureIO();
    expect(await runSubcommand('explain', ['--config=/nonexistent/kube-proxy.yaml', 'default/web'], t.streams)).toBe(1);
    expect(t.err().split('\n')).toHaveLength(2);
    expect(t.err()).toMatch(/^kube-proxy explain: invalid configuration: .*cannot read config file/);
  }, SLOW);

  it('an unknown --proxy-mode is bad input here: exit 1 (the proxy itself exits 2)', async () => {
    const t = captureIO();
    expect(await runSubcommand('trace', ['--proxy-mode=bpf', `--manifests=${EXAMPLES}`, '--hostname-override=node-1', '--from=1.2.3.4', '--to=10.96.0.10:80'], t.streams)).toBe(1);
    expect(t.err()).toMatch(/^kube-proxy trace: unknown proxy mode "bpf"; registered modes: /);
  }, SLOW);
});
