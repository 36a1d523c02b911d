import { execa } from 'execa';
import type { CommandExecutor, CommandOptions, CommandResult } from './command-executor.js';

/**
 * Runs tools with execa 9: an argument array and never a shell (nothing from the API server can
 * become shell syntax), stdin from `input`, the environment merged over process.env, and a result
 * instead of an exception for every outcome. A binary that cannot be started (ENOENT, EACCES) comes
 * back as `spawnError` with a null exit code, which capability detection reads as "not installed".
 */
export class ExecaCommandExecutor implements CommandExecutor {
  async run(command: string, args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
    const result = await execa(command, [...args], {
      reject: false,
      stripFinalNewline: false,
      shell: false,
      ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
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
