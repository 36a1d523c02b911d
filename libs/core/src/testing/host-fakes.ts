import type { CommandExecutor, CommandOptions, CommandResult } from '../host/command-executor.js';
import type { HostFs } from '../host/host-fs.js';
import type { Logger } from '../host/logger.js';
import { sysctlPath } from '../host/proc-sysctl.js';
import type { Sysctl } from '../host/sysctl.js';

/*
 * Fakes of the host ports, for unit tests here and in the backend libraries. They record what was
 * asked of them so tests can assert on it, and are scripted instead of touching the machine.
 */

export interface RecordedCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly options: CommandOptions;
}

export type CommandMatcher =
  | ((call: RecordedCommand) => boolean)
  /** Matches the command exactly and, when given, the whole argument list. */
  | { readonly command: string; readonly args?: readonly string[] };

export type FakeCommandResponse =
  | Partial<CommandResult>
  | ((call: RecordedCommand) => Partial<CommandResult> | Promise<Partial<CommandResult>>);

/** What a real executor returns for a binary that is not installed. */
export function commandNotFound(command: string): CommandResult {
  return { exitCode: null, stdout: '', stderr: '', spawnError: `spawn ${command} ENOENT` };
}

/**
 * A scripted CommandExecutor. Rules are checked newest first, so a test can override a general rule
 * with a specific one. A command no rule matches behaves as "not installed" unless setDefault() says
 * otherwise. Partial responses are completed with exit code 0 and empty output.
 */
export class FakeCommandExecutor implements CommandExecutor {
  readonly calls: RecordedCommand[] = [];
  private readonly rules: { match: CommandMatcher; response: FakeCommandResponse }[] = [];
  private fallback: FakeCommandResponse | undefined;

  on(match: CommandMatcher, response: FakeCommandResponse): this {
    this.rules.unshift({ match, response });
    return this;
  }

  setDefault(response: FakeCommandResponse): this {
    this.fallback = response;
    return this;
  }

  async run(command: string, args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
    const call: RecordedCommand = { command, args: [...args], options };
    this.calls.push(call);
    const rule = this.rules.find((r) => matches(r.match, call));
    const response = rule?.response ?? this.fallback;
    if (response === undefined) return commandNotFound(command);
    const partial = typeof response === 'function' ? await response(call) : response;
    return { exitCode: 0, stdout: '', stderr: '', ...partial };
  }

  /** The calls as `command arg1 arg2` strings, for compact assertions. */
  commandLines(): string[] {
    return this.calls.map((c) => [c.command, ...c.args].join(' '));
  }
}

function matches(m: CommandMatcher, call: RecordedCommand): boolean {
  if (typeof m === 'function') return m(call);
  if (m.command !== call.command) return false;
  return m.args === undefined || (m.args.length === call.args.length && m.args.every((a, i) => a === call.args[i]));
}

/** An in-memory Sysctl. Names are normalised like ProcSysctl's, so dots and slashes are the same key. */
export class FakeSysctl implements Sysctl {
  readonly values = new Map<string, string>();
  readonly writes: { name: string; value: string }[] = [];
  private readonly readOnly = new Set<string>();

  constructor(initial: Readonly<Record<string, string>> = {}) {
    for (const [k, v] of Object.entries(initial)) this.values.set(sysctlPath(k), v);
  }

  /** Makes writes to `name` fail, as in a non-init network namespace. */
  makeReadOnly(name: string): this {
    this.readOnly.add(sysctlPath(name));
    return this;
  }

  async get(name: string): Promise<string | undefined> {
    return this.values.get(sysctlPath(name))?.trim();
  }

  async set(name: string, value: string): Promise<void> {
    const key = sysctlPath(name);
    if (this.readOnly.has(key)) throw new Error(`cannot set sysctl ${name}=${value}: EACCES permission denied`);
    if (!this.values.has(key)) throw new Error(`cannot set sysctl ${name}=${value}: ENOENT no such sysctl`);
    this.writes.push({ name: key, value });
    this.values.set(key, value);
  }
}

/** An in-memory HostFs. Directories exist when named, or when a file lies under them. */
export class FakeHostFs implements HostFs {
  private readonly files = new Map<string, Buffer>();
  private readonly dirs = new Set<string>();

  constructor(
    files: Readonly<Record<string, string | Buffer>> = {},
    private release = '6.1.0-test',
    dirs: readonly string[] = [],
  ) {
    for (const [path, content] of Object.entries(files)) this.addFile(path, content);
    for (const d of dirs) this.dirs.add(trimSlash(d));
  }

  addFile(path: string, content: string | Buffer): this {
    this.files.set(path, typeof content === 'string' ? Buffer.from(content) : content);
    return this;
  }

  setKernelRelease(release: string): this {
    this.release = release;
    return this;
  }

  async exists(path: string): Promise<boolean> {
    const p = trimSlash(path);
    if (this.files.has(p) || this.dirs.has(p)) return true;
    const prefix = `${p}/`;
    return [...this.files.keys(), ...this.dirs].some((f) => f.startsWith(prefix));
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    return this.files.get(trimSlash(path));
  }

  kernelRelease(): string {
    return this.release;
  }
}

function trimSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

export interface LogEntry {
  readonly level: 'error' | 'warn' | 'info' | 'verbose' | 'debug';
  readonly message: string;
  readonly meta: Readonly<Record<string, unknown>>;
}

/** A Logger that keeps every entry (children share the parent's list and add their fields). */
export class RecordingLogger implements Logger {
  constructor(
    readonly entries: LogEntry[] = [],
    private readonly base: Readonly<Record<string, unknown>> = {},
  ) {}

  error(message: string, meta?: Record<string, unknown>): void {
    this.record('error', message, meta);
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.record('warn', message, meta);
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.record('info', message, meta);
  }
  verbose(message: string, meta?: Record<string, unknown>): void {
    this.record('verbose', message, meta);
  }
  debug(message: string, meta?: Record<string, unknown>): void {
    this.record('debug', message, meta);
  }
  child(meta: Record<string, unknown>): Logger {
    return new RecordingLogger(this.entries, { ...this.base, ...meta });
  }

  /** Messages, optionally of one level only. */
  messages(level?: LogEntry['level']): string[] {
    return this.entries.filter((e) => level === undefined || e.level === level).map((e) => e.message);
  }

  /** Whether some entry of `level` contains `text` in its message. */
  has(level: LogEntry['level'], text: string): boolean {
    return this.entries.some((e) => e.level === level && e.message.includes(text));
  }

  clear(): void {
    this.entries.length = 0;
  }

  private record(level: LogEntry['level'], message: string, meta?: Record<string, unknown>): void {
    this.entries.push({ level, message, meta: { ...this.base, ...(meta ?? {}) } });
  }
}
