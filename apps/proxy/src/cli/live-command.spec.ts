import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';

// Each runs the CLI in-process (host detection, the source, a sync): seconds on a busy machine.
const SLOW = 60_000;

// `trace --live` and `explain --live` over a fake mode whose "kernel" is a `fake-rules-save` program
// on PATH: the kernel's rules are read (never the --dry-run ones), and explain
// reports how the kernel differs from what the objects say.
const EXAMPLES = fileURLToPath(new URL('../../../../examples', import.meta.url));
const FAKE = fileURLToPath(new URL('../trace/testing/fake-traced-backend.mjs', import.meta.url));

// The kernel lacks one endpoint of default/web:http (10.244.2.21) that the EndpointSlice has ready.
const KERNEL_RULES = 'SVC default/web:http TCP 10.96.0.10:80 -> 10.244.1.11:8080,10.244.1.12:8080';

describe('--live over a fake mode', () => {
  let dir: string;
  let savedPath: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-live-'));
    const save = join(dir, 'fake-rules-save');
    // IPv4 only: the fake kernel has no IPv6 rules (exit 1, as a tool that finds nothing).
    await writeFile(save, `#!/bin/sh\n[ "$1" = IPv4 ] || exit 1\necho '${KERNEL_RULES}'\n`);
    await chmod(save, 0o755);
    savedPath = process.env['PATH'];
    process.env['PATH'] = `${dir}${delimiter}${savedPath ?? ''}`;
  }, SLOW);
  afterAll(async () => {
    process.env['PATH'] = savedPath;
    await rm(dir, { recursive: true, force: true });
  }, SLOW);

  it('trace --live reads the kernel, not the --dry-run rules', async () => {
    const t = captureIO();
    // The mode is named: detection would read this host's real rules first (trace/live-rules.spec.ts covers it).
    const code = await runCli(['trace', `--backend-plugin=${FAKE}`, '--proxy-mode=faketrace', '--live', '--node-address=192.168.49.2', '--from=192.168.49.2', '--to=10.96.0.10:80', '-o', 'json'], t.streams);
    expect(t.err()).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(t.out())).toMatchObject({
      verdict: 'DNAT',
      endpoints: ['10.244.1.11:8080', '10.244.1.12:8080'],
      masquerade: true,
      mode: 'faketrace',
      source: 'fake-rules-save',
      path: [{ where: 'fake/output' }],
    });
  }, SLOW);

  it('explain --live: the kernel objects, what the mode would program, and the differences', async () => {
    const t = captureIO();
    const code = await runCli(
      ['explain', `--backend-plugin=${FAKE}`, '--proxy-mode=faketrace', `--manifests=${EXAMPLES}`, '--hostname-override=node-1', '--live', 'default/web', '-o', 'json'],
      t.streams,
    );
    expect(t.err()).toBe('');
    expect(code).toBe(0);
    const kernel = (JSON.parse(t.out()) as { kernel: { live: boolean; sources: unknown; objects: { name: string }[]; expected: { name: string }[]; differences: string[] } }).kernel;
    expect(kernel.live).toBe(true);
    expect(kernel.sources).toEqual({ IPv4: 'fake-rules-save' });
    expect(kernel.objects.map((o) => o.name)).toEqual(['fake/default/web:http']);
    expect(kernel.expected.map((o) => o.name)).toEqual(['fake/default/web:http', 'fake/default/web:https']);
    expect(kernel.differences.join('\n')).toContain('10.244.2.21');
  }, SLOW);
});
