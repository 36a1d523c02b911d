/**
 * A backend published the way a third party would publish it (issue 14 item 3): core and
 * examples/plugins/echo-backend packed with `npm pack`, installed from the tarballs into a fresh
 * project outside the workspace, and loaded by the repo's bin/kube-proxy by bare package name with
 * that project as the working directory. The plugin must receive the example cluster and sync it;
 * a plugin for another contract version, a throwing register() and a module without a plugin export
 * are refused with the module named and exit status 1. No root needed. ~10–20 s (npm install from
 * npm's cache ~5 s).
 */
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KUBE_PROXY_BIN, REPO_ROOT, createProjectWith, envWithoutNpm, runCommand, type RunResult } from './support/out-of-tree-project.js';

const EXAMPLES = join(REPO_ROOT, 'examples');
const PLUGIN = 'kube-proxy-echo-backend';

interface EchoState {
  plugin: string;
  version: string;
  families: Record<string, { syncs: number; services: Array<{ name: string; clusterIP: string; port: number; endpoints: Array<{ endpoint: string; ready: boolean }> }> }>;
}

let project: string;

function kubeProxy(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return runCommand(KUBE_PROXY_BIN, [`--manifests=${EXAMPLES}`, '--dry-run', '--once', ...args], { cwd: project, env: envWithoutNpm(env), timeoutMs: 20_000 });
}

/** The JSON document of the first `# sync` block on stdout. */
function firstDryRunDocument(stdout: string): EchoState {
  const blocks = stdout.split(/^# sync .*$/m).filter((b) => b.trim() !== '');
  if (blocks.length === 0) throw new Error(`no dry-run block on stdout:\n${stdout}`);
  return JSON.parse(blocks[0] ?? '') as EchoState;
}

beforeAll(async () => {
  project = await createProjectWith(['libs/core', 'examples/plugins/echo-backend'], 50_000);
}, 60_000);

afterAll(async () => {
  if (project && !process.env['KUBE_PROXY_E2E_KEEP']) await rm(project, { recursive: true, force: true });
});

describe('an out-of-tree backend plugin installed from its tarball', () => {
  it('is found from the working directory, receives the example Services and endpoints, and syncs', async () => {
    const stateFile = join(project, 'echo-state.json');
    const r = await kubeProxy([`--backend-plugin=${PLUGIN}`, '--proxy-mode=echo'], { KUBE_PROXY_ECHO_STATE: stateFile });
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stderr).toContain(`Loaded backend plugin module="${PLUGIN}" mode="echo" version="0.1.0"`);
    expect(r.stderr).toContain('First sync done; exiting because of --once');
    expect(r.stdout).toMatch(/^# sync 1 echo IPv4$/m);
    // The plugin's package.json sits inside examples/: the manifest source must not read it as an object.
    expect(r.stderr).not.toContain('examples/plugins/echo-backend');

    const printed = firstDryRunDocument(r.stdout);
    expect(printed.plugin).toBe('echo');
    expect(printed.version).toBe('0.1.0');
    const v4 = printed.families['IPv4'];
    expect(v4?.syncs).toBe(1);
    const web = v4?.services.find((s) => s.name === 'default/web:http');
    expect(web).toMatchObject({ clusterIP: '10.96.0.10', port: 80 });
    expect(web?.endpoints.map((e) => e.endpoint)).toEqual(expect.arrayContaining(['10.244.1.11:8080', '10.244.1.12:8080', '10.244.2.21:8080']));
    // The state file holds what the sync printed.
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual(printed);
  });

  it('takes the state path as a plugin option from a site module that wraps the package', async () => {
    const site = join(project, 'site-echo.mjs');
    await writeFile(
      site,
      `import { createEchoBackend } from '${PLUGIN}';\n` +
        `export const backend = createEchoBackend({ statePath: new URL('./site-state.json', import.meta.url).pathname });\n`,
    );
    const r = await kubeProxy(['--backend-plugin=./site-echo.mjs', '--proxy-mode=echo']);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    const written = JSON.parse(readFileSync(join(project, 'site-state.json'), 'utf8')) as EchoState;
    expect(written.families['IPv4']?.services.map((s) => s.name)).toContain('default/web:http');
  });

  describe('refusals', () => {
    const cases: Array<{ what: string; file: string; source: string; mode: string; message: string }> = [
      {
        what: 'a plugin written for another contract version',
        file: 'echo-v9.mjs',
        source: `import { backend as echo } from '${PLUGIN}';\nexport const backend = { ...echo, apiVersion: 'kube-proxy.backend/v9' };\n`,
        mode: 'echo',
        message:
          'kube-proxy: --backend-plugin=./echo-v9.mjs: unsupported backend plugin apiVersion "kube-proxy.backend/v9"; this kube-proxy supports "kube-proxy.backend/v1"\n',
      },
      {
        what: 'a plugin whose register() throws',
        file: 'echo-throws.mjs',
        source: `import { backend as echo } from '${PLUGIN}';\nexport const backend = { ...echo, register() { throw new Error('no datapath on this node'); } };\n`,
        mode: 'echo',
        message: 'kube-proxy: --backend-plugin=./echo-throws.mjs: backend plugin "echo" failed in register(): no datapath on this node\n',
      },
      {
        what: 'a module with neither a "backend" nor a default export',
        file: 'not-a-plugin.mjs',
        source: `export const echo = 1;\n`,
        mode: 'iptables',
        message: 'kube-proxy: --backend-plugin=./not-a-plugin.mjs: the module exports neither "backend" nor a default export\n',
      },
    ];
    it.each(cases)('refuses $what with exit status 1', async ({ file, source, mode, message }) => {
      await writeFile(join(project, file), source);
      const r = await kubeProxy([`--backend-plugin=./${file}`, `--proxy-mode=${mode}`]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain('kube-proxy failed');
      expect(r.stdout).toBe('');
    });
  });
});
