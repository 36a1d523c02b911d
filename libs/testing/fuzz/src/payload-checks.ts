/**
 * Structural checks of an iptables-restore payload, independent of the renderer: the line grammar
 * iptables-restore accepts (`*table`, `:CHAIN POLICY [0:0]`, `-A`/`-X`/`-F` rules, `COMMIT`), no NUL
 * or CR anywhere, every quoted comment closed on its own line, and no text from a comment leaking
 * into the rule itself (one `-j`, only plain tokens outside comments, chains declared before use).
 * The tokenizer follows iptables-restore's own (xshared.c add_param_to_argv): blanks split, `"`
 * opens/closes a quoted part, `\` escapes only inside quotes.
 */

/** One argument of a rule line as iptables-restore splits it. */
export interface RuleToken {
  readonly text: string;
  /** Whether any part of it was quoted. */
  readonly quoted: boolean;
}

/** Splits a rule line like iptables-restore; `openQuote` when the line ends inside a quote. */
export function tokenizeRuleLine(line: string): { tokens: RuleToken[]; openQuote: boolean } {
  const tokens: RuleToken[] = [];
  let buf = '';
  let quoted = false;
  let inQuote = false;
  let escaped = false;
  let started = false;
  const flush = (): void => {
    if (started) tokens.push({ text: buf, quoted });
    buf = '';
    quoted = false;
    started = false;
  };
  for (const ch of line) {
    if (inQuote) {
      if (escaped) {
        buf += ch;
        escaped = false;
      } else if (ch === '\\') {
        escaped = true;
      } else if (ch === '"') {
        // iptables-restore ends the argument at the closing quote.
        inQuote = false;
        flush();
      } else {
        buf += ch;
      }
      continue;
    }
    if (ch === '"') {
      inQuote = true;
      quoted = true;
      started = true;
    } else if (ch === ' ' || ch === '\t') {
      flush();
    } else {
      buf += ch;
      started = true;
    }
  }
  const openQuote = inQuote;
  flush();
  return { tokens, openQuote };
}

const BUILTIN_CHAINS: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
};
/** iptables' limit on chain names (XT_EXTENSION_MAXNAMELEN - 1). */
const MAX_CHAIN_NAME = 28;
/** xt_comment's XT_MAX_COMMENT_LEN - 1. */
export const MAX_COMMENT_LENGTH = 256;
const CHAIN_NAME = /^[A-Za-z0-9_-]+$/;
/** What a rule argument outside a comment may look like: names, addresses, ports, marks, flags. */
const PLAIN_TOKEN = /^[A-Za-z0-9_.:/!,=+[\]-]+$/;
const TARGETS = new Set(['-j', '--jump', '-g', '--goto']);

export interface PayloadCheckOptions {
  /**
   * A partial sync's payload: rules may jump to chains it does not declare (they exist in the kernel
   * from an earlier sync), so that check is skipped.
   */
  readonly partial?: boolean;
}

/** Everything wrong with `payload`; [] when iptables-restore's grammar and the no-injection rules hold. */
export function payloadProblems(payload: string, opts: PayloadCheckOptions = {}): string[] {
  const problems: string[] = [];
  if (payload.includes('\0')) problems.push('payload contains NUL');
  if (payload.includes('\r')) problems.push('payload contains CR');
  if (payload.length > 0 && !payload.endsWith('\n')) problems.push('payload does not end with a newline');
  const lines = payload.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let table: string | null = null;
  let declared = new Set<string>();
  lines.forEach((line, i) => {
    const at = `line ${i + 1} ${JSON.stringify(line.length > 160 ? `${line.slice(0, 160)}…` : line)}`;
    if (line.startsWith('*')) {
      if (table !== null) problems.push(`${at}: table opened before COMMIT of ${table}`);
      table = line.slice(1);
      if (BUILTIN_CHAINS[table] === undefined) problems.push(`${at}: unknown table`);
      declared = new Set(BUILTIN_CHAINS[table] ?? []);
      return;
    }
    if (line === 'COMMIT') {
      if (table === null) problems.push(`${at}: COMMIT outside a table`);
      table = null;
      return;
    }
    if (line.startsWith('#')) return;
    if (table === null) {
      problems.push(`${at}: outside a table`);
      return;
    }
    if (line.startsWith(':')) {
      const m = /^:(\S+) (-|ACCEPT|DROP|RETURN) \[\d+:\d+\]$/.exec(line);
      if (m === null) problems.push(`${at}: malformed chain line`);
      else if (!CHAIN_NAME.test(m[1]) || m[1].length > MAX_CHAIN_NAME) problems.push(`${at}: bad chain name`);
      else declared.add(m[1]);
      return;
    }
    const { tokens, openQuote } = tokenizeRuleLine(line);
    if (openQuote) {
      problems.push(`${at}: quote not closed on its line`);
      return;
    }
    const op = tokens[0]?.text;
    const chain = tokens[1]?.text;
    if (op !== '-A' && op !== '-X' && op !== '-F' && op !== '-I') {
      problems.push(`${at}: not a chain, rule or COMMIT line`);
      return;
    }
    if (chain === undefined || tokens[1].quoted || !CHAIN_NAME.test(chain)) {
      problems.push(`${at}: bad chain name`);
      return;
    }
    if (op === '-X' || op === '-F') {
      if (tokens.length !== 2) problems.push(`${at}: extra arguments`);
      return;
    }
    if (!declared.has(chain)) problems.push(`${at}: rule in undeclared chain ${chain}`);
    let targets = 0;
    for (let t = 2; t < tokens.length; t++) {
      const tok = tokens[t];
      if (tok.text === '--comment' && !tok.quoted) {
        const value = tokens[t + 1];
        if (value === undefined) problems.push(`${at}: --comment without a value`);
        else if ([...value.text].length > MAX_COMMENT_LENGTH) problems.push(`${at}: comment longer than ${MAX_COMMENT_LENGTH}`);
        t++;
        continue;
      }
      if (tok.quoted || !PLAIN_TOKEN.test(tok.text)) {
        problems.push(`${at}: argument ${JSON.stringify(tok.text)} outside a comment is not a plain token`);
        continue;
      }
      if (TARGETS.has(tok.text)) {
        targets++;
        const target = tokens[t + 1]?.text ?? '';
        if (!opts.partial && target.startsWith('KUBE-') && !declared.has(target)) problems.push(`${at}: jump to undeclared chain ${target}`);
      }
    }
    // Upstream writes one counter-only rule (no target) in each firewall chain; never more than one.
    if (targets > 1) problems.push(`${at}: ${targets} targets (want at most one -j/-g)`);
  });
  if (table !== null) problems.push(`table ${table} not committed`);
  return problems;
}
