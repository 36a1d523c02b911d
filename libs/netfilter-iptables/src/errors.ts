/** A failed iptables / ip6tables / *-save / *-restore invocation. */
export class IptablesError extends Error {
  constructor(
    message: string,
    /** The process exit code; null when it died of a signal or never started. */
    readonly exitCode: number | null,
    /** Combined stderr/stdout text of the tool, trimmed. */
    readonly output: string,
  ) {
    super(message);
    this.name = 'IptablesError';
  }
}

/**
 * iptables-restore rejected its input. `line` is the 1-based payload line the tool blamed, when its
 * message named one (upstream's utiliptables.ParseError).
 */
export class IptablesRestoreError extends IptablesError {
  constructor(
    message: string,
    exitCode: number | null,
    output: string,
    readonly line: number | undefined,
  ) {
    super(message, exitCode, output);
    this.name = 'IptablesRestoreError';
  }
}

// The forms iptables 1.8.x uses to name the failing input line (both variants; see the datapath notes):
//   "iptables-restore: line 4 failed"                     (commit-time failures)
//   "Error occurred at line: 3"                            (parse-time failures)
//   "iptables-restore: COMMIT expected at line 4"          (truncated input)
//   "line 2: CHAIN_DEL failed (Device or resource busy)"   (iptables-nft commit failures)
const LINE_PATTERNS: readonly RegExp[] = [
  /line (\d+) failed/,
  /Error occurred at line: (\d+)/,
  /at line (\d+)/,
  /(?:^|\s)line (\d+): /m,
];

/** The payload line an iptables-restore error message blames, if any. */
export function parseRestoreErrorLine(output: string): number | undefined {
  for (const re of LINE_PATTERNS) {
    const m = re.exec(output);
    if (m) {
      const n = Number(m[1]);
      if (Number.isInteger(n) && n > 0) return n;
    }
  }
  return undefined;
}

/** One payload line with its 1-based number, as upstream's utiliptables.LineData. */
export interface PayloadLine {
  readonly line: number;
  readonly text: string;
}

/**
 * The lines `line - count` … `line + count` of `payload` (1-based, clipped to the payload), as
 * upstream's utiliptables.ExtractLines, for logging the context of a restore failure.
 */
export function extractLines(payload: string, line: number, count: number): PayloadLine[] {
  if (line < 1) return [];
  const lines = payload.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const start = Math.max(1, line - count);
  const end = Math.min(lines.length, line + count);
  const out: PayloadLine[] = [];
  for (let n = start; n <= end; n++) out.push({ line: n, text: lines[n - 1] ?? '' });
  return out;
}

// Upstream's iptablesNotFoundStrings: the messages both variants print for a missing chain/rule.
const NOT_FOUND_STRINGS = [
  'No chain/target/match by that name',
  'No such file or directory',
  'does a matching rule exist',
  'does not exist',
  // iptables-nft prints this for -S / -L of a chain that does not exist.
  'is incompatible, use',
];

/** Whether an error says "no such chain/rule" (for deciding to ignore it, as upstream's IsNotFoundError). */
export function isNotFoundError(err: unknown): boolean {
  const text = err instanceof IptablesError ? `${err.message} ${err.output}` : String(err);
  return NOT_FOUND_STRINGS.some((s) => text.includes(s));
}

/**
 * Exit code 4 is iptables' RESOURCE_PROBLEM (for example "Another app is currently holding the xtables
 * lock"): the question could not be answered, as upstream's isResourceError.
 */
export function isResourceError(err: unknown): boolean {
  return err instanceof IptablesError && err.exitCode === 4;
}
