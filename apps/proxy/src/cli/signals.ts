/**
 * SIGTERM / SIGINT handling of the proxy process: the first signal asks the run to stop (the run leaves
 * its rules in place and exits 0); a second one ends the process at once.
 *
 * Why the listeners are installed once and never removed: execa 9 uses signal-exit, which, while a
 * child process is running, listens for SIGTERM/SIGINT itself and re-sends the signal to the process
 * ("nobody else handles it, so it must be fatal") when its own listeners are the only ones left. A
 * one-shot listener that removes itself on the first signal lets signal-exit see exactly that, and
 * the proxy died with 143 (killed by SIGTERM) in the middle of its graceful shutdown whenever an
 * iptables-restore happened to be running. A listener that stays installed until the process exits
 * keeps signal-exit from ever re-raising.
 *
 * A second signal (after the first was delivered) ends the process with SECOND_SIGNAL_EXIT_CODE
 * without waiting for the shutdown, as Kubernetes components do (k8s.io/apiserver's signal handler
 * exits 1 on the second signal): the rules are still left in place, but the shutdown was cut short,
 * so it is not reported as success. A signal that arrives when no run is waiting for one (during
 * startup, before anything is programmed, or after the run returned while the process drains) ends
 * the process at once with the run's exit code (0 when there is none yet).
 */

/** Exit status when a second SIGTERM/SIGINT arrives while the first one's shutdown is still running. */
export const SECOND_SIGNAL_EXIT_CODE = 1;

export const TERMINATION_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

interface Waiter {
  readonly resolve: (signal: NodeJS.Signals) => void;
}

/** The part of `process` the handling uses (tests pass their own emitter instead of the real process). */
export interface SignalProcess {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  exit(code: number): void;
  readonly exitCode?: number | string | null | undefined;
  readonly stderr: { write(text: string): unknown };
}

/** SIGTERM/SIGINT handling of one process (see the header). */
export class TerminationSignals {
  /** Runs waiting for a signal (normally one: the CLI's run). */
  private readonly waiters = new Set<Waiter>();
  /** The first signal this process received, if any. */
  private received: NodeJS.Signals | undefined;
  private installed = false;
  /** Exit status for a signal no run waits for while interruptible work runs. */
  private interruptedExitCode: number | undefined;

  constructor(private readonly proc: SignalProcess) {}

  /**
   * Installs the process listeners (idempotent). main.ts calls it first thing, so that a signal during
   * startup, before the run waits for one, also ends the process with 0 instead of Node's default
   * (killed by the signal).
   */
  install(): void {
    if (this.installed) return;
    this.installed = true;
    for (const s of TERMINATION_SIGNALS) this.proc.on(s, (signal) => this.onSignal(signal));
  }

  /**
   * Resolves with the signal name on the first SIGTERM or SIGINT. `dispose` stops waiting; the process
   * listeners stay installed (see the header), so a later signal still ends the process promptly.
   */
  onceTerminated(): { promise: Promise<NodeJS.Signals>; dispose: () => void } {
    this.install();
    let waiter!: Waiter;
    const promise = new Promise<NodeJS.Signals>((resolve) => {
      waiter = {
        resolve: (signal) => {
          this.waiters.delete(waiter);
          resolve(signal);
        },
      };
    });
    this.waiters.add(waiter);
    return { promise, dispose: () => void this.waiters.delete(waiter) };
  }

  /**
   * Runs work that a signal may cut short but that must not then be reported as success (--cleanup: a
   * half-removed rule set is not "cleaned up"): a signal while it runs ends the process with `code`.
   */
  async duringInterruptibleWork<T>(code: number, work: () => Promise<T>): Promise<T> {
    this.install();
    const previous = this.interruptedExitCode;
    this.interruptedExitCode = code;
    try {
      return await work();
    } finally {
      this.interruptedExitCode = previous;
    }
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (this.received === undefined && this.waiters.size > 0) {
      this.received = signal;
      for (const w of [...this.waiters]) w.resolve(signal);
      return;
    }
    if (this.received !== undefined) {
      this.proc.stderr.write(`kube-proxy: second signal (${signal}) during shutdown; exiting now with ${SECOND_SIGNAL_EXIT_CODE}\n`);
      this.proc.exit(SECOND_SIGNAL_EXIT_CODE);
      return;
    }
    const code = this.interruptedExitCode ?? this.proc.exitCode;
    this.proc.exit(typeof code === 'number' ? code : 0);
  }
}

/** This process's handling: what main.ts and the CLI use. */
const processSignals = new TerminationSignals(process);

export const installTerminationHandlers = (): void => processSignals.install();
export const onceTerminated = (): { promise: Promise<NodeJS.Signals>; dispose: () => void } => processSignals.onceTerminated();
export const duringInterruptibleWork = <T>(code: number, work: () => Promise<T>): Promise<T> =>
  processSignals.duringInterruptibleWork(code, work);
