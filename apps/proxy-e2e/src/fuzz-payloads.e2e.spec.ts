/**
 * Kernel acceptance of fuzzed payloads: a seeded sample of fuzz clusters (valid and hostile Services,
 * EndpointSlices and Nodes; libs/testing/fuzz) is rendered by the iptables Provider — behind core's
 * validation, and with validation bypassed so the renderer alone faces the hostile objects — and every
 * payload, IPv4 and IPv6, must be accepted by `iptables-restore --test` (nft and legacy) inside a
 * network namespace of this run. FUZZ_SEED=<int> replays or varies the sample; the seed is printed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BAD_POOL_ADDRESS, fuzzSeed, payloadProblems, replayHint, samplePayloads, type SampledPayload } from '@kube-proxy/testing-fuzz';
import { IPTABLES_VARIANTS, cleanupStaleRuns, createSimulatedNode, iptablesCommand, runPrefix, type IptablesVariant, type SimulatedNode } from '@kube-proxy/testing-netns';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';

const pre = await e2ePreflight('fuzz payloads');
const describeNetns = pre.run ? describe : describe.skip;

const TAG = 'kpfz';
const SEED = fuzzSeed();
/** Clusters per kind; each gives an IPv4 and an IPv6 payload. */
const VALIDATED_CLUSTERS = 30;
const RAW_CLUSTERS = 15;
/** The bound for this suite, all variants included. */
const SUITE_BUDGET_MS = 60_000;

describeNetns(`fuzzed payloads in the kernel (${replayHint(SEED)})`, () => {
  let node: SimulatedNode | undefined;
  let tmp = '';
  let started = 0;
  const payloads: SampledPayload[] = [];

  const n = (): SimulatedNode => {
    if (!node) throw new Error('namespace was not created (see beforeAll error)');
    return node;
  };

  beforeAll(async () => {
    started = Date.now();
    console.log(`fuzz-payloads: ${replayHint(SEED)}`);
    if (pre.missingTools.length > 0) throw new Error(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    tmp = mkdtempSync(join(tmpdir(), 'kp-e2e-fuzz-'));
    await cleanupStaleRuns(TAG);
    // One pod is the least the harness builds; only the node namespace is used.
    node = await createSimulatedNode({ prefix: runPrefix(TAG), podCount: 1, env: { XTABLES_LOCKFILE: join(tmp, 'xtables.lock') } });
    payloads.push(...(await samplePayloads({ seed: SEED, count: VALIDATED_CLUSTERS, validated: true })));
    payloads.push(...(await samplePayloads({ seed: SEED, count: RAW_CLUSTERS, validated: false, cluster: { maxInvalidServices: 4 } })));
  }, 60_000);

  afterAll(async () => {
    await node?.destroy();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  /** Runs `iptables-restore --test` of every payload of `kind`; returns one line per rejected payload. */
  async function testRestore(variant: IptablesVariant, validated: boolean): Promise<string[]> {
    const failures: string[] = [];
    for (const p of payloads.filter((x) => x.validated === validated)) {
      const tool = iptablesCommand(variant, p.family === 'IPv4' ? 'iptables-restore' : 'ip6tables-restore');
      const r = await n().exec(n().ns.node, tool, ['-w', '5', '--noflush', '--test'], { input: p.payload, allowFailure: true, timeoutMs: 15_000 });
      if (r.code !== 0) {
        const file = join(tmp, `${p.id.replace(/\//g, '-')}-${variant}.rules`);
        writeFileSync(file, p.payload);
        failures.push(`${p.id} (${tool}): exit ${r.code}${r.timedOut ? ' (timed out)' : ''}: ${r.stderr.trim().slice(0, 300)} [payload kept in ${file}]`);
      }
    }
    return failures;
  }

  it('samples enough payloads, and each is well-formed before the kernel sees it', () => {
    expect(payloads.filter((p) => p.validated)).toHaveLength(2 * VALIDATED_CLUSTERS);
    expect(payloads.filter((p) => !p.validated)).toHaveLength(2 * RAW_CLUSTERS);
    // The sample is not trivial: most payloads carry service rules.
    expect(payloads.filter((p) => /^-A KUBE-SERVICES .* -j KUBE-SV[CL]-/m.test(p.payload)).length).toBeGreaterThan(payloads.length / 2);
    // The raw sample is not vacuous either: rejected objects' addresses did reach the renderer.
    expect(payloads.filter((p) => !p.validated && BAD_POOL_ADDRESS.test(p.payload)).length).toBeGreaterThan(0);
    const problems = payloads.flatMap((p) => p.problems.map((x) => `${p.id}: ${x}`));
    expect({ seed: SEED, problems: problems.slice(0, 20) }).toEqual({ seed: SEED, problems: [] });
  });

  it.each(IPTABLES_VARIANTS)('iptables-%s-restore --test accepts every payload rendered from validated objects', async (variant) => {
    const failures = await testRestore(variant, true);
    expect({ seed: SEED, failures }).toEqual({ seed: SEED, failures: [] });
  }, 60_000);

  it.each(IPTABLES_VARIANTS)('iptables-%s-restore --test accepts every payload rendered from raw hostile objects (validation bypassed)', async (variant) => {
    const failures = await testRestore(variant, false);
    expect({ seed: SEED, failures }).toEqual({ seed: SEED, failures: [] });
  }, 60_000);

  it.each(IPTABLES_VARIANTS)('iptables-%s-restore commits the largest payload of each kind and family into the kernel', async (variant) => {
    // --test stops short of the kernel's own checks of each match and target; one real commit each does not.
    const failures: string[] = [];
    for (const validated of [true, false]) {
      for (const family of ['IPv4', 'IPv6'] as const) {
        const candidates = payloads.filter((p) => p.validated === validated && p.family === family);
        const largest = candidates.reduce((a, b) => (b.payload.length > a.payload.length ? b : a), candidates[0]);
        const tool = (t: 'iptables-restore' | 'iptables-save') => iptablesCommand(variant, family === 'IPv4' ? t : t === 'iptables-restore' ? 'ip6tables-restore' : 'ip6tables-save');
        const r = await n().exec(n().ns.node, tool('iptables-restore'), ['-w', '5', '--noflush'], { input: largest.payload, allowFailure: true, timeoutMs: 15_000 });
        if (r.code !== 0) {
          failures.push(`${largest.id} (${tool('iptables-restore')}): exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`);
          continue;
        }
        const saved = (await n().exec(n().ns.node, tool('iptables-save'), ['-t', 'nat'], { timeoutMs: 15_000 })).stdout;
        const declared = [...largest.payload.slice(largest.payload.indexOf('*nat\n')).matchAll(/^:(KUBE-\S+) /gm)].map((m) => m[1]);
        const missing = declared.filter((c) => !saved.includes(`:${c} `));
        if (missing.length > 0) failures.push(`${largest.id}: chains not in the kernel after the commit: ${missing.slice(0, 5).join(', ')}`);
      }
    }
    expect({ seed: SEED, failures }).toEqual({ seed: SEED, failures: [] });
  }, 60_000);

  it('the checks are not vacuous: the line checks and the kernel reject a comment that does not close on its line', async () => {
    const sample = payloads.find((p) => p.family === 'IPv4' && p.validated);
    if (!sample) throw new Error('no IPv4 payload sampled');
    // What an unescaped hostile name would produce: the comment's newline starts a rule of its own.
    const injected = sample.payload.replace(':KUBE-FORWARD - [0:0]\n', ':KUBE-FORWARD - [0:0]\n-A KUBE-FORWARD -m comment --comment "x\n-j ACCEPT"\n');
    expect(injected).not.toBe(sample.payload);
    expect(payloadProblems(injected).length).toBeGreaterThan(0);
    const r = await n().exec(n().ns.node, iptablesCommand('nft', 'iptables-restore'), ['-w', '5', '--noflush', '--test'], {
      input: injected,
      allowFailure: true,
      timeoutMs: 15_000,
    });
    expect(r.code).not.toBe(0);
  });

  it(`stays within ${SUITE_BUDGET_MS / 1000} s`, () => {
    const elapsed = Date.now() - started;
    console.log(`fuzz-payloads: ${payloads.length} payloads × ${IPTABLES_VARIANTS.length} variants in ${elapsed} ms (${replayHint(SEED)})`);
    expect(elapsed).toBeLessThan(SUITE_BUDGET_MS);
  });
});
