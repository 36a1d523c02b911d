/**
 * The last guard before text goes to a line-oriented kernel tool (iptables-restore, and later
 * ipset restore / nft -f): a rendered line must stay ONE line, whatever string reached it.
 *
 * Renderers build lines from constants, chain names (hashes), numbers, canonical IP text (core
 * parses and re-formats every address) and names made comment-safe by commentText. If anything else
 * ever slips in, these checks refuse the payload (UnsafeRestoreTextError) instead of letting the
 * tool read something we did not mean. What they refuse, from iptables 1.8.9 (nft and legacy,
 * measured in a network namespace):
 * - `\n` inside a line: the rest is read as a line of its own (a rule, `COMMIT`, `*filter`, …);
 * - NUL: the C string ends there, the rest of the line is silently dropped;
 * - `\r`: kept in the token (`-j ACCEPT\r` is an unknown target; in a comment it is stored and
 *   printed raw by iptables-save);
 * - a line longer than the reader's buffer: iptables-restore reads lines with fgets into 10,240
 *   bytes, so the part after byte 10,239 is parsed as a new line, an injection without any newline.
 *   We allow RESTORE_LINE_MAX_LENGTH (4,096), far above the longest line we write (< 500 bytes);
 * - (string form only) any other control character or non-ASCII character: our rendered text is
 *   printable ASCII, so anything else means an unsanitised string got through.
 */

/** The longest line (bytes, without its newline) a payload may contain. */
export const RESTORE_LINE_MAX_LENGTH = 4096;

/** A rendered line or payload that a kernel tool would not read as we meant it. */
export class UnsafeRestoreTextError extends Error {
  constructor(
    message: string,
    /** 1-based line of the payload (when known). */
    readonly line?: number,
  ) {
    super(message);
    this.name = 'UnsafeRestoreTextError';
  }
}

const UNSAFE_CHAR = /[^\t\x20-\x7e]/;

function describeChar(code: number): string {
  if (code === 0x0a) return 'a newline';
  if (code === 0x0d) return 'a carriage return';
  if (code === 0x00) return 'a NUL byte';
  return code < 0x20 || code === 0x7f ? `control character 0x${code.toString(16).padStart(2, '0')}` : `non-ASCII character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `line` cannot be written as one line of restore input, or undefined when it can. */
export function restoreLineProblem(line: string): string | undefined {
  if (line.length > RESTORE_LINE_MAX_LENGTH) return `line is ${line.length} characters long (at most ${RESTORE_LINE_MAX_LENGTH})`;
  const m = UNSAFE_CHAR.exec(line);
  return m === null ? undefined : `line contains ${describeChar(line.charCodeAt(m.index))} at column ${m.index + 1}`;
}

/** Throws UnsafeRestoreTextError unless `line` is one safe line of restore input (no newline, NUL, `\r`, …). */
export function assertRestoreLine(line: string, lineNumber?: number): void {
  const problem = restoreLineProblem(line);
  if (problem !== undefined) throw unsafe(problem, lineNumber, line);
}

/**
 * Checks a whole payload: every line safe (string form: as assertRestoreLine; bytes: no NUL, no
 * `\r`, no line over RESTORE_LINE_MAX_LENGTH), the payload ends with a newline, and, when
 * `expectedLines` is given, it has exactly that many lines, so that a newline hidden inside one
 * written line (which adds a line) is caught too. The byte form costs a few milliseconds for a
 * 10,000-Service payload (~18 MB): NUL and `\r` are memchr searches, the line walk one indexOf per line.
 */
export function assertRestorePayload(payload: string | Uint8Array | readonly Uint8Array[], expectedLines?: number): void {
  let lines: number;
  if (typeof payload === 'string') {
    lines = checkString(payload);
  } else {
    lines = checkBytes(payload instanceof Uint8Array ? [payload] : payload);
  }
  if (expectedLines !== undefined && lines !== expectedLines) {
    throw new UnsafeRestoreTextError(`payload has ${lines} lines where ${expectedLines} were written: a written line contained a line break`);
  }
}

function checkString(payload: string): number {
  if (payload === '') return 0;
  if (!payload.endsWith('\n')) throw new UnsafeRestoreTextError('payload does not end with a newline');
  let start = 0;
  let lineNo = 0;
  while (start < payload.length) {
    const end = payload.indexOf('\n', start);
    lineNo++;
    assertRestoreLine(payload.slice(start, end), lineNo);
    start = end + 1;
  }
  return lineNo;
}

function checkBytes(chunks: readonly Uint8Array[]): number {
  const buffers = chunks.map((c) => (Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
  for (const b of buffers) {
    if (b.indexOf(0) >= 0) throw new UnsafeRestoreTextError(`payload contains ${describeChar(0)}`);
    if (b.indexOf(0x0d) >= 0) throw new UnsafeRestoreTextError(`payload contains ${describeChar(0x0d)}`);
  }
  let lines = 0;
  // Length of the line still open at the end of the previous chunk (lines may span chunks).
  let open = 0;
  let last = -1;
  for (const b of buffers) {
    if (b.length === 0) continue;
    let start = 0;
    for (let nl = b.indexOf(0x0a); nl >= 0; nl = b.indexOf(0x0a, start)) {
      if (open + nl - start > RESTORE_LINE_MAX_LENGTH) {
        throw new UnsafeRestoreTextError(`line ${lines + 1} is ${open + nl - start} bytes long (at most ${RESTORE_LINE_MAX_LENGTH})`, lines + 1);
      }
      lines++;
      open = 0;
      start = nl + 1;
    }
    open += b.length - start;
    if (open > RESTORE_LINE_MAX_LENGTH) {
      throw new UnsafeRestoreTextError(`line ${lines + 1} is over ${RESTORE_LINE_MAX_LENGTH} bytes long`, lines + 1);
    }
    last = b[b.length - 1] as number;
  }
  if (last !== -1 && last !== 0x0a) throw new UnsafeRestoreTextError('payload does not end with a newline');
  return lines;
}

function unsafe(problem: string, lineNumber: number | undefined, line: string): UnsafeRestoreTextError {
  const where = lineNumber === undefined ? '' : `line ${lineNumber}: `;
  return new UnsafeRestoreTextError(`unsafe restore text: ${where}${problem}: ${JSON.stringify(line.slice(0, 120))}`, lineNumber);
}
