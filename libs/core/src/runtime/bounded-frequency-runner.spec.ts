import { BoundedFrequencyRunner } from './bounded-frequency-runner.js';
import { FakeClock } from '../testing/fake-clock.js';

// Ported from upstream's bounded_frequency_runner_test.go. Upstream observes the timer's Stop/Reset
// calls through a channel; here the equivalent observation is "how far away is the next timer".
const minInterval = 1000;
const maxInterval = 10_000;

/** Lets queued microtasks and promise continuations (the runner's and fn's) finish. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Harness {
  clock: FakeClock;
  runner: BoundedFrequencyRunner;
  /** Calls of fn since the last check. */
  takeCalls(): number;
  setRetryFn(f: (() => void) | undefined): void;
  loopDone: Promise<void>;
}

async function start(burstRuns: number): Promise<Harness> {
  const clock = new FakeClock();
  let calls = 0;
  let retryFn: (() => void) | undefined;
  const runner = new BoundedFrequencyRunner({
    name: 'test-runner',
    fn: async () => {
      calls++;
      const f = retryFn;
      retryFn = undefined;
      f?.();
      await Promise.resolve();
    },
    minIntervalMs: minInterval,
    maxIntervalMs: maxInterval,
    burstRuns,
    clock,
  });
  const loopDone = runner.loop();
  await settle();
  return {
    clock,
    runner,
    loopDone,
    takeCalls: () => {
      const n = calls;
      calls = 0;
      return n;
    },
    setRetryFn: (f) => (retryFn = f),
  };
}

async function expectRun(h: Harness, step: string, next = maxInterval): Promise<void> {
  await settle();
  expect({ step, calls: h.takeCalls(), next: h.clock.nextTimerDelay() }).toEqual({ step, calls: 1, next });
}

async function expectDefer(h: Harness, step: string, next: number): Promise<void> {
  await settle();
  expect({ step, calls: h.takeCalls(), next: h.clock.nextTimerDelay() }).toEqual({ step, calls: 0, next });
}

async function expectNothing(h: Harness, step: string, next?: number): Promise<void> {
  await settle();
  expect({ step, calls: h.takeCalls() }).toEqual({ step, calls: 0 });
  if (next !== undefined) expect(h.clock.nextTimerDelay()).toBe(next);
}

async function finish(h: Harness): Promise<void> {
  h.runner.stop();
  await h.loopDone;
  expect(h.clock.pendingTimers()).toBe(0);
}

describe('BoundedFrequencyRunner', () => {
  it('starts with the periodic timer set to maxInterval and does not run by itself', async () => {
    const h = await start(1);
    expect(h.clock.nextTimerDelay()).toBe(maxInterval);
    expect(h.takeCalls()).toBe(0);
    await finish(h);
  });

  it('never runs fn synchronously from run()', async () => {
    const h = await start(1);
    h.runner.run();
    expect(h.takeCalls()).toBe(0);
    await expectRun(h, 'async run');
    await finish(h);
  });

  it('no burst (upstream Test_BoundedFrequencyRunnerNoBurst)', async () => {
    const h = await start(1);
    const { clock, runner } = h;

    runner.run(); // rel=0ms
    await expectRun(h, 'first run');

    clock.advance(500); // rel=500ms
    runner.run();
    await expectDefer(h, 'too soon after first', 500);

    clock.advance(499); // rel=999ms
    runner.run();
    await expectDefer(h, 'still too soon after first', 1);

    clock.advance(1); // rel=1000ms
    await expectRun(h, 'second run');

    runner.run();
    await expectDefer(h, 'too soon after second', 1000);

    clock.advance(1); // rel=1ms
    runner.run();
    await expectDefer(h, 'still too soon after second', 999);

    clock.advance(998); // rel=999ms
    await expectNothing(h, 'premature', 1);

    clock.advance(1); // rel=1000ms
    await expectRun(h, 'third run');

    clock.advance(1000); // rel=1000ms, nothing queued
    await expectNothing(h, 'minInterval', 9000);

    clock.advance(9000); // rel=10000ms
    await expectRun(h, 'maxInterval');

    clock.advance(1); // rel=1ms
    runner.run();
    await expectDefer(h, 'too soon after maxInterval run', 999);

    clock.advance(999); // rel=1000ms
    await expectRun(h, 'fifth run');
    await finish(h);
  });

  it('burst (upstream Test_BoundedFrequencyRunnerBurst)', async () => {
    const h = await start(2);
    const { clock, runner } = h;

    runner.run(); // abs=0ms, rel=0ms
    await expectRun(h, 'first run');

    clock.advance(1); // abs=1ms, rel=1ms
    runner.run();
    await expectRun(h, 'second run (burst)');

    clock.advance(498); // abs=499ms, rel=498ms
    runner.run();
    await expectDefer(h, 'too soon after second', 502);

    clock.advance(1); // abs=500ms, rel=499ms
    runner.run();
    await expectDefer(h, 'too soon after second 2', 501);

    clock.advance(1); // abs=501ms, rel=500ms
    runner.run();
    await expectDefer(h, 'too soon after second 3', 500);

    // Enough to earn a token back, not enough to be minInterval after the last run.
    clock.advance(499); // abs=1000ms, rel=999ms
    await expectNothing(h, 'not minInterval');
    runner.run();
    await expectRun(h, 'third run');

    clock.advance(1); // abs=1001ms, rel=1ms
    runner.run();
    await expectDefer(h, 'too soon after third', 999);

    clock.advance(998); // abs=1999ms, rel=999ms
    runner.run();
    await expectDefer(h, 'too soon after third 2', 1);

    clock.advance(1); // abs=2000ms, rel=1000ms
    await expectRun(h, 'fourth run');

    clock.advance(2000); // abs=4000ms: the burst is full again
    runner.run();
    await expectRun(h, 'fifth run');
    runner.run();
    await expectRun(h, 'sixth run');
    runner.run();
    await expectDefer(h, 'too soon after sixth', 1000);

    clock.advance(1000); // abs=5000ms
    await expectRun(h, 'seventh run');

    clock.advance(10_000); // abs=15000ms
    await expectRun(h, 'maxInterval');
    await finish(h);
  });

  it('retryAfter (upstream Test_BoundedFrequencyRunnerRetryAfter)', async () => {
    const h = await start(1);
    const { clock, runner } = h;

    // Run once and queue a retry from inside fn.
    h.setRetryFn(() => runner.retryAfter(5000));
    runner.run();
    await expectRun(h, 'first run', 5000);

    clock.advance(1000);
    await expectNothing(h, 'minInterval, nothing queued', 4000);

    clock.advance(4000); // the retry
    await expectRun(h, 'retry');

    clock.advance(499);
    runner.run();
    await expectDefer(h, 'too soon after retry', 501);

    // The deferred run happens; a retry is queued while it runs.
    clock.advance(501);
    runner.retryAfter(5000);
    await expectRun(h, 'second run', 5000);

    clock.advance(1000);
    await expectNothing(h, 'minInterval, nothing queued', 4000);

    runner.run();
    await expectRun(h, 'third run');

    clock.advance(4000);
    await expectNothing(h, 'retry cancelled by the third run');

    // Queue a retry from "elsewhere", shortly after a run (upstream: a goroutine sleeping 100ms).
    h.setRetryFn(() => {
      clock.setTimeout(() => runner.retryAfter(5000), 100);
    });
    runner.run();
    await expectRun(h, 'fourth run', 100); // the test's own 100ms timer is the nearest one
    clock.advance(100);
    await expectNothing(h, 'retry queued', 5000);

    runner.run();
    await expectDefer(h, 'too soon after fourth run', 900);

    clock.advance(900);
    await expectRun(h, 'fifth run');

    clock.advance(4000); // 5s after retryAfter
    await expectNothing(h, 'retry cancelled by the fifth run');

    clock.advance(5000);
    await expectNothing(h, 'premature');
    clock.advance(1000);
    await expectRun(h, 'maxInterval');
    await finish(h);
  });

  it('coalesces requests made while a run is in progress into one run', async () => {
    const clock = new FakeClock();
    let calls = 0;
    let release!: () => void;
    const runner = new BoundedFrequencyRunner({
      name: 'slow',
      fn: () => {
        calls++;
        return new Promise<void>((resolve) => (release = resolve));
      },
      minIntervalMs: 0,
      maxIntervalMs: 60_000,
      burstRuns: 1,
      clock,
    });
    const done = runner.loop();
    runner.run();
    await settle();
    expect(calls).toBe(1);
    runner.run();
    runner.run();
    runner.run();
    await settle();
    expect(calls).toBe(1); // never overlapping
    release();
    await settle();
    expect(calls).toBe(2); // the three requests became one run
    release();
    await settle();
    expect(calls).toBe(2);
    runner.stop();
    await done;
  });

  it('keeps going after fn fails, and logs the failure', async () => {
    const clock = new FakeClock();
    const errors: string[] = [];
    let calls = 0;
    const runner = new BoundedFrequencyRunner({
      name: 'failing',
      fn: () => {
        calls++;
        throw new Error('boom');
      },
      minIntervalMs: 0,
      maxIntervalMs: 1000,
      burstRuns: 1,
      clock,
      logger: {
        error: (m, meta) => errors.push(`${m} ${String(meta?.['err'])}`),
        warn: () => undefined,
        info: () => undefined,
        verbose: () => undefined,
        debug: () => undefined,
        child() {
          return this;
        },
      },
    });
    const done = runner.loop();
    runner.run();
    await settle();
    clock.advance(1000);
    await settle();
    expect(calls).toBe(2);
    expect(errors).toEqual(['failing: run failed boom', 'failing: run failed boom']);
    runner.stop();
    await done;
  });

  it('stop() waits for the run in progress, then loop() resolves; later requests are ignored', async () => {
    const clock = new FakeClock();
    let release!: () => void;
    let calls = 0;
    const runner = new BoundedFrequencyRunner({
      name: 'stopping',
      fn: () => {
        calls++;
        return new Promise<void>((resolve) => (release = resolve));
      },
      minIntervalMs: 0,
      maxIntervalMs: 1000,
      burstRuns: 1,
      clock,
    });
    let resolved = false;
    const done = runner.loop().then(() => (resolved = true));
    runner.run();
    await settle();
    runner.stop();
    await settle();
    expect(resolved).toBe(false);
    release();
    await done;
    expect(resolved).toBe(true);
    runner.run();
    clock.advance(5000);
    await settle();
    expect(calls).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('handles a run() made before loop() once the loop starts', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const runner = new BoundedFrequencyRunner({ name: 'early', fn: () => void calls++, minIntervalMs: 1000, maxIntervalMs: 5000, burstRuns: 1, clock });
    runner.run();
    await settle();
    expect(calls).toBe(0);
    const done = runner.loop();
    await settle();
    expect(calls).toBe(1);
    runner.stop();
    await done;
  });

  it('rejects maxInterval < minInterval and a burst below 1', () => {
    const clock = new FakeClock();
    expect(() => new BoundedFrequencyRunner({ name: 'x', fn: () => undefined, minIntervalMs: 10, maxIntervalMs: 5, burstRuns: 1, clock })).toThrow(
      /maxInterval/,
    );
    expect(() => new BoundedFrequencyRunner({ name: 'x', fn: () => undefined, minIntervalMs: 10, maxIntervalMs: 50, burstRuns: 0, clock })).toThrow(
      /burst/,
    );
  });
});
