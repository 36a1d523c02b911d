import { jest } from '@jest/globals';
import { SECOND_SIGNAL_EXIT_CODE, duringInterruptibleWork, onceTerminated } from './signals.js';

// Signals are delivered with process.emit (the listeners run exactly as for a real signal); process.exit
// is replaced so the test process survives. signals.ts keeps process-wide state (the first signal
// received), so the tests run in this order, in one file.
describe('termination signals', () => {
  let exit: jest.SpiedFunction<typeof process.exit>;
  beforeEach(() => {
    exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  });
  afterEach(() => exit.mockRestore());

  it('exits 1 on a signal during interruptible work (--cleanup) and with the exit code (0) outside it', async () => {
    await duringInterruptibleWork(1, async () => {
      process.emit('SIGTERM', 'SIGTERM');
    });
    expect(exit).toHaveBeenLastCalledWith(1);
    process.emit('SIGTERM', 'SIGTERM');
    expect(exit).toHaveBeenLastCalledWith(0);
  });

  it('hands the first signal to the waiting run instead of exiting, and exits 1 on a second one', async () => {
    const t = onceTerminated();
    process.emit('SIGTERM', 'SIGTERM');
    await expect(t.promise).resolves.toBe('SIGTERM');
    expect(exit).not.toHaveBeenCalled();
    process.emit('SIGINT', 'SIGINT');
    expect(exit).toHaveBeenCalledWith(SECOND_SIGNAL_EXIT_CODE);
  });

  it('keeps its listeners installed after the first signal, so signal-exit never re-raises it', () => {
    expect(process.listenerCount('SIGTERM')).toBeGreaterThan(0);
    expect(process.listenerCount('SIGINT')).toBeGreaterThan(0);
  });
});
