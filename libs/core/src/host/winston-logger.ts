import * as winston from 'winston';
import { systemClock, type Clock } from './clock.js';
import type { Logger } from './logger.js';

export interface LoggerOptions {
  /** klog-style verbosity (--v): 0–1 info, 2–3 adds verbose, 4+ adds debug. */
  readonly verbosity: number;
  readonly format: 'text' | 'json';
  /** Where lines go; stderr by default, because stdout carries --dry-run output. */
  readonly stream?: NodeJS.WritableStream;
  /** Source of timestamps (tests pass a fake). */
  readonly clock?: Clock;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'verbose' | 'debug';

const LEVELS: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, verbose: 3, debug: 4 };
const SEVERITY: Record<LogLevel, string> = { error: 'E', warn: 'W', info: 'I', verbose: 'I', debug: 'I' };
/** winston keeps the rendered line under this symbol (triple-beam's MESSAGE). */
const MESSAGE = Symbol.for('message');

/** The most detailed level shown at a verbosity: upstream logs "V(2)" details at -v=2, "V(4)" at -v=4. */
export function levelForVerbosity(verbosity: number): LogLevel {
  if (verbosity >= 4) return 'debug';
  if (verbosity >= 2) return 'verbose';
  return 'info';
}

/**
 * The process logger: winston, rendering klog-like text (`I1129 12:00:00.123456 msg key="value"`) or
 * JSON lines (`{"ts":…,"level":"info","msg":…,…}`), structured fields kept as fields.
 */
export function createLogger(options: LoggerOptions): Logger {
  const clock = options.clock ?? systemClock;
  const render = options.format === 'json' ? renderJson : renderText;
  const format = winston.format((info) => {
    const { level, message, ...rest } = info as { level: LogLevel; message: unknown } & Record<string, unknown>;
    (info as Record<symbol, unknown>)[MESSAGE] = render(new Date(clock.now()), level, String(message), rest);
    return info;
  });
  const w = winston.createLogger({
    levels: LEVELS,
    level: levelForVerbosity(options.verbosity),
    format: format(),
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stderr })],
  });
  return new WinstonLogger(w);
}

class WinstonLogger implements Logger {
  constructor(private readonly w: winston.Logger) {}
  error(message: string, meta?: Record<string, unknown>): void {
    this.w.log('error', message, meta ?? {});
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.w.log('warn', message, meta ?? {});
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.w.log('info', message, meta ?? {});
  }
  verbose(message: string, meta?: Record<string, unknown>): void {
    this.w.log('verbose', message, meta ?? {});
  }
  debug(message: string, meta?: Record<string, unknown>): void {
    this.w.log('debug', message, meta ?? {});
  }
  child(meta: Record<string, unknown>): Logger {
    return new WinstonLogger(this.w.child(meta));
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** klog's header: severity letter, MMDD, local time with microseconds (ours end in 000). */
function renderText(now: Date, level: LogLevel, message: string, fields: Record<string, unknown>): string {
  const head =
    `${SEVERITY[level]}${pad(now.getMonth() + 1)}${pad(now.getDate())} ` +
    `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${pad(now.getMilliseconds(), 3)}000`;
  const kv = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}=${textValue(v)}`)
    .join('');
  return `${head} ${message}${kv}`;
}

function textValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v === null) return '<nil>';
  if (v instanceof Error) return JSON.stringify(v.message);
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  return safeJson(v);
}

function renderJson(now: Date, level: LogLevel, message: string, fields: Record<string, unknown>): string {
  return safeJson({ ts: now.getTime() / 1000, level, msg: message, ...fields });
}

/** JSON that never throws: errors become their message, bigints strings, cycles a marker. */
function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Error) return v.message;
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  });
}
