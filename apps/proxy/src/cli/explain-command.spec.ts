import { fileURLToPath } from 'node:url';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';

// Each runs the CLI in-process (host detection, the source, a sync): seconds on a busy machine.
const SLOW = 60_000;

// `kube-proxy explain` over a fake mode (trace/testing/fake-traced-backend.mjs): core's explanation
// of the Service, the mode's kernel objects, exit codes.
const EXAMPLES = fileURLToPath(new URL('../../../../examples', import.meta.url));
const FAKE = fileURLToPath(new URL('../trace/testing/fake-traced-backend.mjs', import.meta.url));
const BASE = [`--backend-plugin=${FAKE}`, '--proxy-mode=faketrace', `--manifests=${EXAMPLES}`, '--hostname-override=node-1'];

async function explain(...argv: string[]) {
  const t = captureIO();
  const code = await runCli(['explain', ...BASE, ...argv], t.streams);
  return { code, out: t.out(), err: t.err() };
}

describe('kube-proxy explain (over a fake mode)', () => {
  it("-o json: core's explanation per port, and the mode's objects for the Service with their rule counts", async () => {
    const r = await explain('default/web', '-o', 'json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown> & { ports: { servicePort: string; family: string }[] };
    expect(j).toMatchObject({ service: 'default/web', node: 'node-1', mode: 'faketrace', families: ['IPv4'], proxied: true });
    expect(j.ports.map((p) => `${p.servicePort} ${p.family}`)).toEqual(['default/web:http IPv4', 'default/web:https IPv4']);
    expect(j['kernel']).toEqual({
      mode: 'faketrace',
      sources: { IPv4: '--dry-run output' },
      live: false,
      objects: [
        {
          family: 'IPv4',
          kind: 'fake chain',
          name: 'fake/default/web:http',
          rules: 4,
          endpoints: ['10.244.1.11:8080', '10.244.1.12:8080', '10.244.2.21:8080'],
          servicePort: 'default/web:http',
        },
        {
          family: 'IPv4',
          kind: 'fake chain',
          name: 'fake/default/web:https',
          rules: 4,
          endpoints: ['10.244.1.11:8443', '10.244.1.12:8443', '10.244.2.21:8443'],
          servicePort: 'default/web:https',
        },
      ],
    });
  }, SLOW);

  it('text: where the objects come from, then the explanation as an operator reads it', async () => {
    const r = await explain('default/web');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toBe('Rules: faketrace mode, what the mode would program (IPv4 from --dry-run output)');
    expect(r.out).toContain('default/web:http');
    expect(r.out).toContain('fake/default/web:https');
  }, SLOW);

  it.each([
    [['default/nope'], `kube-proxy explain: service default/nope not found in --manifests ${EXAMPLES}`],
    [['web'], 'kube-proxy explain: malformed Service "web": want NAMESPACE/NAME'],
    [[], 'kube-proxy explain: explain needs the Service: NAMESPACE/NAME'],
    [['--live', 'default/web'], "kube-proxy explain: no faketrace rules found on this node for IPv4: looked for fake-rules-save IPv4 (the fake mode's rule dump); " +
        "no faketrace rules found on this node for IPv6: looked for fake-rules-save IPv6 (the fake mode's rule dump)"],
  ])('%j: one line on stderr, exit 1', async (argv, line) => {
    const r = await explain(...argv);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(line + '\n');
  }, SLOW);
});
