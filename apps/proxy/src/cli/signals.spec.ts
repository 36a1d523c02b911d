import { EventEmitter } from 'node:events';
import { SECOND_SIGNAL_EXIT_CODE, TerminationSignals, type SignalProcess } from './signals.js';

/** A stand-in process: signals are emitted on it, exit codes recorded (the test process is untouched). */
class FakeProcess extends EventEmitter implements SignalProcess {
  readonly exits: number[] = [];
  exitCode: number | undefined;
  readonly stderr = { write: (_text: string) => true };
  exit(code: number): void {
    this.exits.push(code);
  }
}

describe('TerminationSignals', () => {
  it('hands the first signal to the waiting run instead of exiting, and exits 1 on a second one', async () => {
    const proc = new FakeProcess();
    const t = new TerminationSignals(proc).onceTerminated();
    proc.emit('SIGTERM', 'SIGTERM');
    await expect(t.promise).resolves.toBe('SIGTERM');
    expect(proc.exits).toEqual([]);
    proc.emit('SIGINT', 'SIGINT');
    expect(proc.exits).toEqual([SECOND_SIGNAL_EXIT_CODE]);
  });

  it('keeps its listeners installed after the first signal (so signal-exit never re-raises it)', async () => {
    const proc = new FakeProcess();
    const t = new TerminationSignals(proc).onceTerminated();
    proc.emit('SIGINT', 'SIGINT');
    await t.promise;
    t.dispose();
    expect(proc.listenerCount('SIGTERM')).toBe(1);
    expect(proc.listenerCount('SIGINT')).toBe(1);
  });

  it('exits 1 on a signal during interruptible work (--cleanup)', async () => {
    const proc = new FakeProcess();
    await new TerminationSignals(proc).duringInterruptibleWork(1, async () => {
      proc.emit('SIGTERM', 'SIGTERM');
    });
    expect(proc.exits).toEqual([1]);
  });

  it('exits with the exit code (0 when unset) on a signal no run waits for', () => {
    const proc = new FakeProcess();
    const signals = new TerminationSignals(proc);
    signals.install();
    proc.emit('SIGTERM', 'SIGTERM');
    proc.exitCode = 1;
    proc.emit('SIGINT', 'SIGINT');
    expect(proc.exits).toEqual([0, 1]);
  });
});
