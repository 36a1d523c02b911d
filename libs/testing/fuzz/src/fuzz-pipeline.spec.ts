import fc from 'fast-check';
import { validateEndpointSlice, validateNode, validateService } from '@kube-proxy/core';
import {
  BAD_POOL_ADDRESS,
  CORE_VALIDATOR,
  expectedServicePorts,
  fuzzCluster,
  fuzzClusterChange,
  fuzzRuns,
  fuzzSeed,
  garbageService,
  invalidEndpointSlice,
  invalidNode,
  invalidService,
  payloadProblems,
  replayHint,
  runChange,
  runPipeline,
  runProblems,
  showValue,
  validatedRunProblems,
  validEndpointSlice,
  validNode,
  validService,
  type FieldError,
  type FuzzObject,
  type PipelineRun,
} from './index.js';

// Property-based fuzzing of Services, EndpointSlices and Nodes through validation → Provider
// (trackers, topology) → iptables renderer. Seeded (FUZZ_SEED, default fixed) and bounded.

const SEED = fuzzSeed();

async function check<T>(arb: fc.Arbitrary<T>, runs: number, predicate: (value: T) => Promise<void> | void): Promise<void> {
  try {
    await fc.assert(
      fc.asyncProperty(arb, async (v) => {
        await predicate(v);
      }),
      { seed: SEED, numRuns: fuzzRuns(runs), endOnFailure: true },
    );
  } catch (err) {
    (err as Error).message = `${replayHint(SEED)}\n${(err as Error).message}`;
    throw err;
  }
}

const show = (o: unknown): string => showValue(o);

function expectReported(input: FuzzObject<unknown>, errors: readonly FieldError[]): void {
  if (errors.length === 0) throw new Error(`invalid object (${input.mutation}) accepted by validation: ${show(input.object)}`);
  for (const e of errors) {
    if (typeof e.field !== 'string' || typeof e.message !== 'string' || e.message === '') throw new Error(`malformed FieldError ${show(e)}`);
  }
  const prefixes = input.fields ?? [''];
  if (!errors.some((e) => prefixes.some((p) => e.field.startsWith(p)))) {
    throw new Error(`${input.mutation}: no error names ${prefixes.join(' or ')}; got ${show(errors)} for ${show(input.object)}`);
  }
}

function validationCase<T>(
  validArb: fc.Arbitrary<T>,
  invalidArb: fc.Arbitrary<FuzzObject<unknown>>,
  validate: (o: never) => readonly FieldError[],
): [fc.Arbitrary<FuzzObject<unknown>>, (input: FuzzObject<unknown>) => void] {
  const arb = fc.oneof(
    validArb.map((object): FuzzObject<unknown> => ({ object, valid: true })),
    invalidArb,
  );
  return [
    arb,
    (input) => {
      const errors = validate(input.object as never);
      if (input.valid && errors.length > 0) throw new Error(`valid object rejected: ${show(errors)} for ${show(input.object)}`);
      if (!input.valid) expectReported(input, errors);
    },
  ];
}

describe(`fuzz: validation (${replayHint(SEED)})`, () => {
  it('accepts every valid Service and reports every invalid one with the field at fault, never throwing', async () => {
    const svc = fc.oneof(
      validService({ namespace: 'ns1', name: 'web', index: 1 }),
      validService({ namespace: 'ns1', name: 'web', index: 1, kinds: ['LoadBalancer'] }),
    );
    const bad = fc.oneof({ weight: 6, arbitrary: invalidService({ namespace: 'ns1', name: 'web', index: 1 }) }, { weight: 1, arbitrary: garbageService() });
    const [arb, predicate] = validationCase(svc, bad, validateService);
    await check(arb, 300, predicate);
  });

  it('accepts every valid EndpointSlice and reports every invalid one with the field at fault', async () => {
    const types = ['IPv4', 'IPv6', 'FQDN'] as const;
    const opts = (addressType: (typeof types)[number]) => ({ namespace: 'ns1', serviceName: 'web', sliceName: 'web-abc12', addressType });
    const [arb, predicate] = validationCase(
      fc.oneof(...types.map((t) => validEndpointSlice(opts(t)))),
      fc.oneof(...types.map((t) => invalidEndpointSlice(opts(t)))),
      validateEndpointSlice,
    );
    await check(arb, 300, predicate);
  });

  it('accepts every valid Node and reports every invalid one with the field at fault', async () => {
    const [arb, predicate] = validationCase(validNode(), invalidNode(), validateNode);
    await check(arb, 200, predicate);
  });
});

describe(`fuzz: validation → Provider → iptables renderer (${replayHint(SEED)})`, () => {
  it('never throws, renders a well-formed payload, keeps rejected objects out and every usable valid Service port in', async () => {
    await check(fuzzCluster(), 50, async (cluster) => {
      const run = await runPipeline(cluster, { validator: CORE_VALIDATOR });
      const problems = validatedRunProblems(run);
      if (problems.length > 0) throw new Error(`${problems.slice(0, 8).join('\n')}\ncluster: ${show(cluster)}`);
    });
  }, 60_000);

  it('with validation bypassed, hostile objects still never throw nor produce a malformed or injected payload', async () => {
    let reached = 0;
    await check(fuzzCluster({ maxInvalidServices: 4, maxHostileNamed: 3 }), 40, async (cluster) => {
      const run = await runPipeline(cluster, { validator: null });
      const problems = runProblems(run);
      if (problems.length > 0) throw new Error(`${problems.slice(0, 8).join('\n')}\ncluster: ${show(cluster)}`);
      for (const f of Object.values(run.families)) if (BAD_POOL_ADDRESS.test(f.payload)) reached++;
    });
    // Not vacuous: hostile objects did reach the renderer and got rules.
    expect(reached).toBeGreaterThan(10);
  }, 60_000);

  it('after deletes, updates and adds, the next sync leaves the tables exactly as a fresh sync of the new objects', async () => {
    let changed = 0;
    await check(fuzzClusterChange(), 30, async (change) => {
      const runs = await runChange(change, CORE_VALIDATOR);
      const problems: string[] = [];
      for (const [family, r] of Object.entries(runs)) {
        for (const f of [r.first, r.second]) {
          problems.push(...f.thrown.map((t) => `${family}: handler threw: ${t}`), ...f.restoreErrors.map((e) => `${family}: restore failed: ${e}`));
          if (f.stats.failedSyncs > 0) problems.push(`${family}: failed syncs: ${show(f.errorLogs)}`);
        }
        if (r.second.payload !== '') {
          changed++;
          problems.push(...payloadProblems(r.second.payload, { partial: true }).map((p) => `${family} (second sync): ${p}`));
        }
        if (r.incremental !== r.fresh) {
          const a = r.incremental.split('\n');
          const b = r.fresh.split('\n');
          const i = a.findIndex((line, k) => line !== b[k]);
          problems.push(`${family}: tables after the changes differ from a fresh sync at line ${i + 1}: ${show(a.slice(i, i + 3))} vs ${show(b.slice(i, i + 3))}`);
        }
      }
      if (problems.length > 0) throw new Error(`${problems.slice(0, 8).join('\n')}\nchange: ${show(change)}`);
    });
    // Not vacuous: most rounds changed something and synced again.
    expect(changed).toBeGreaterThan(15);
  }, 60_000);

  it('payload checks are not vacuous: the oracle expects Service ports in most generated clusters', () => {
    // Guards the presence property against a generator that stops producing usable endpoints.
    const clusters = fc.sample(fuzzCluster(), { seed: SEED, numRuns: 30 });
    let expected = 0;
    for (const cluster of clusters) {
      const accepted = (o: FuzzObject<unknown>) => ({ input: o, errors: o.valid ? [] : [{ field: '', message: 'invalid' }] });
      const run = { node: accepted(cluster.node), services: cluster.services.map(accepted), slices: cluster.slices.map(accepted), families: {} } as unknown as PipelineRun;
      expected += expectedServicePorts(run, 'IPv4').length + expectedServicePorts(run, 'IPv6').length;
    }
    expect(expected).toBeGreaterThan(30);
  });
});
