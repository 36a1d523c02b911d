import { closeSync, openSync } from 'node:fs';
import { execa } from 'execa';
import type { CommandExecutor, CommandOptions, CommandResult } from './command-executor.js';

/** File descriptors a spawn needs: three pipes (two ends each) and one for the exec error channel. */
const SPAWN_FDS = 8;

/**
 * Opens and closes SPAWN_FDS descriptors; returns the error code (EMFILE, ENFILE) when the process or
 * the system is out of them. Synchronous on purpose: nothing else in this thread can take a
 * descriptor between this check and the synchronous spawn that follows it.
 */
export function spawnFdHeadroom(): string | undefined {
  const opened: number[] = [];
  try {
    for (let i = 0; i < SPAWN_FDS; i++) opened.push(openSync('/dev/null', 'r'));
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  } finally {
    for (const fd of opened) closeSync(fd);
  }
}

/**
 * execa's stdin options for `input`. Chunks go as an iterator, which execa writes chunk by chunk
 * (an array would mean "several stdin targets" to execa, and a Readable without a file descriptor
 * is refused).
 */
function stdinOf(input: CommandOptions['input']): { input: string } | { stdin: Iterator<Uint8Array> & Iterable<Uint8Array> } | { stdin: 'ignore' } {
  if (input === undefined) return { stdin: 'ignore' };
  if (typeof input === 'string') return { input };
  return { stdin: input.values() };
}

/**
 * Runs tools with execa 9: an argument array and never a shell (nothing from the API server can
 * become shell syntax), stdin from `input`, the environment merged over process.env, and a result
 * instead of an exception for every outcome. A binary that cannot be started (ENOENT, EACCES) comes
 * back as `spawnError` with a null exit code, which capability detection reads as "not installed".
 */
export class ExecaCommandExecutor implements CommandExecutor {
  constructor(private readonly fdHeadroom: () => string | undefined = spawnFdHeadroom) {}

  async run(command: string, args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
    // execa 9 cannot survive a spawn that fails for lack of descriptors: it throws while wrapping the
    // child and leaves the child's 'error' event unhandled, which kills the process. A node proxying
    // thousands of connections can get there; it must fail this one command, not go down.
    const outOfFds = this.fdHeadroom();
    if (outOfFds !== undefined) {
      return { exitCode: null, stdout: '', stderr: '', spawnError: `spawn ${command} ${outOfFds}: not enough free file descriptors to start it` };
    }
    const result = await execa(command, [...args], {
      reject: false,
      stripFinalNewline: false,
      shell: false,
      ...stdinOf(options.input),
      ...(options.discardStdout ? { stdout: 'ignore' as const } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      ...(options.env !== undefined ? { env: { ...options.env }, extendEnv: true } : {}),
    });
    const stdout = typeof result.stdout === 'string' ? result.stdout : '';
    let stderr = typeof result.stderr === 'string' ? result.stderr : '';
    const exitCode = typeof result.exitCode === 'number' ? result.exitCode : null;

    // execa reports a failed spawn with the errno code and no exit code.
    const code = (result as { code?: unknown }).code;
    if (exitCode === null && typeof code === 'string' && /^E[A-Z]+$/.test(code) && !result.timedOut && !result.signal) {
      return { exitCode: null, stdout, stderr, spawnError: result.originalMessage ?? `${command}: ${code}` };
    }
    if (result.timedOut) {
      // Say so in stderr: callers only see a null exit code otherwise.
      stderr += `${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}${command}: killed after the ${options.timeoutMs}ms timeout\n`;
    }
    return { exitCode, stdout, stderr };
  }
}
