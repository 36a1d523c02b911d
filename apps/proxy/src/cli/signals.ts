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

/** Runs waiting for a signal (normally one: the CLI's run). */
const waiters = new Set<Waiter>();
/** The first signal this process received, if any. */
let received: NodeJS.Signals | undefined;
let installed = false;
/** Exit status for a signal no run waits for while interruptible work runs (see duringInterruptibleWork). */
let interruptedExitCode: number | undefined;

function onSignal(signal: NodeJS.Signals): void {
  if (received === undefined && waiters.size > 0) {
    received = signal;
    for (const w of [...waiters]) w.resolve(signal);
    return;
  }
  if (received !== undefined) {
    process.stderr.write(`kube-proxy: second signal (${signal}) during shutdown; exiting now with ${SECOND_SIGNAL_EXIT_CODE}\n`);
    process.exit(SECOND_SIGNAL_EXIT_CODE);
  }
  const code = interruptedExitCode ?? process.exitCode;
  process.exit(typeof code === 'number' ? code : 0);
}

/**
 * Runs work that a signal may cut short but that must not then be reported as success (--cleanup: a
 * half-removed rule set is not "cleaned up"): a signal while it runs ends the process with `code`.
 */
export async function duringInterruptibleWork<T>(code: number, work: () => Promise<T>): Promise<T> {
  installTerminationHandlers();
  const previous = interruptedExitCode;
  interruptedExitCode = code;
  try {
    return await work();
  } finally {
    interruptedExitCode = previous;
  }
}

/**
 * Installs the process listeners (idempotent). main.ts calls it first thing, so that a signal during
 * startup, before the run waits for one, also ends the process with 0 instead of Node's default
 * (killed by the signal).
 */
export function installTerminationHandlers(): void {
  if (installed) return;
  installed = true;
  for (const s of TERMINATION_SIGNALS) process.on(s, onSignal);
}

/**
 * Resolves with the signal name on the first SIGTERM or SIGINT. `dispose` stops waiting; the process
 * listeners stay installed (see the header), so a later signal still ends the process promptly.
 */
export function onceTerminated(): { promise: Promise<NodeJS.Signals>; dispose: () => void } {
  installTerminationHandlers();
  let waiter!: Waiter;
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    waiter = {
      resolve: (signal) => {
        waiters.delete(waiter);
        resolve(signal);
      },
    };
  });
  waiters.add(waiter);
  return { promise, dispose: () => void waiters.delete(waiter) };
}
