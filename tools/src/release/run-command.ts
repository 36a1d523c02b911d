/**
 * Runs a tool with an argument array (never a shell string) and a hard timeout, and puts the tool's own
 * output into the error, because a failed `npm install` is only explained by what npm printed.
 */
import { execFile } from 'node:child_process';

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

export function runCommand(command: string, args: readonly string[], options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(command, [...args], { cwd: options.cwd, timeout: options.timeoutMs, env: options.env ?? process.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${command} ${args.join(' ')} (in ${options.cwd}) failed: ${err.message}\n${stderr}${stdout}`.trimEnd()));
        return;
      }
      resolve({ stdout, stderr });
    });
  });
}
