import type { CommandExecutor, CommandOptions, CommandResult } from '../command-executor.js';
import type { ToolInfo } from './types.js';
import { parseVersion, formatVersion } from './version.js';

const PROBE_TIMEOUT_MS = 5000;

/** A command that could not be run at all: not installed (spawn error, or a shell's 126/127). */
export function notInstalled(r: CommandResult): boolean {
  return r.spawnError !== undefined || r.exitCode === 127 || r.exitCode === 126;
}

export interface ToolProbe extends ToolInfo {
  /** The tool's own first line of --version output, for logs and reasons. */
  readonly banner?: string;
}

/**
 * Runs a probe, turning a rejected promise (an executor that refuses the command, e.g. a --dry-run
 * guard) into a result that says it could not run, so detection reports instead of crashing.
 */
export async function safeRun(exec: CommandExecutor, command: string, args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
  try {
    return await exec.run(command, args, { timeoutMs: PROBE_TIMEOUT_MS, ...options });
  } catch (err) {
    return { exitCode: null, stdout: '', stderr: '', spawnError: err instanceof Error ? err.message : String(err) };
  }
}

/** Runs `<tool> --version` and reads the version number from its output. */
export async function probeTool(exec: CommandExecutor, tool: string): Promise<ToolProbe> {
  const r = await safeRun(exec, tool, ['--version']);
  if (notInstalled(r)) return { present: false };
  const banner = `${r.stdout}\n${r.stderr}`.split('\n').map((l) => l.trim()).find((l) => l !== '');
  const version = banner ? parseVersion(banner) : undefined;
  return {
    present: true,
    ...(version ? { version: formatVersion(version) } : {}),
    ...(banner ? { banner } : {}),
  };
}

/** Runs a read-only command for its output; "" when it is missing or fails. */
export async function outputOf(exec: CommandExecutor, command: string, args: readonly string[]): Promise<{ ran: boolean; stdout: string }> {
  const r = await safeRun(exec, command, args);
  if (notInstalled(r)) return { ran: false, stdout: '' };
  return { ran: r.exitCode === 0, stdout: r.exitCode === 0 ? r.stdout : '' };
}
