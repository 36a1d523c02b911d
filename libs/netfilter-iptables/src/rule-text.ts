import { UnsafeRestoreTextError } from '@kube-proxy/core';

/**
 * Splitting and joining iptables-restore lines as iptables-restore's argument parser (iptables 1.8.9,
 * nft and legacy, checked with the real tool) does: space, tab and newline separate arguments; a
 * double quote opens a quoted part even in the middle of a word, and the closing quote ends the
 * argument (`ab"c d"e` is `abc d` then `e`); inside quotes a backslash takes the next character
 * literally (`\"` is `"`, `\\` is `\`, `\n` is `n`); outside quotes a backslash is an ordinary
 * character; `\r`, `'` and `#` are ordinary characters.
 */
export function tokenize(line: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let inToken = false;
  let inQuotes = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (inQuotes) {
      if (ch === '\\' && i + 1 < line.length) {
        current += line[++i];
      } else if (ch === '"') {
        // The closing quote ends the argument.
        inQuotes = false;
        tokens.push(current);
        current = '';
        inToken = false;
      } else {
        current += ch;
      }
      continue;
    }
    if (ch === '"') {
      inQuotes = true;
      inToken = true;
    } else if (ch === ' ' || ch === '\t' || ch === '\n') {
      if (inToken) {
        tokens.push(current);
        current = '';
        inToken = false;
      }
    } else {
      current += ch;
      inToken = true;
    }
  }
  if (inQuotes) throw new Error('unterminated quoted string');
  if (inToken) tokens.push(current);
  return tokens;
}

/**
 * Quotes one argument for an iptables-restore line when it needs it (whitespace, quotes, empty).
 * Throws UnsafeRestoreTextError for an argument with a newline, `\r` or NUL: iptables-restore has no
 * way to carry them inside an argument (a newline ends the line, NUL the string, `\r` is kept raw).
 */
export function quoteArg(arg: string): string {
  if (/[\n\r\0]/.test(arg)) {
    throw new UnsafeRestoreTextError(`argument ${JSON.stringify(arg.slice(0, 120))} cannot be written on an iptables-restore line (newline, carriage return or NUL)`);
  }
  if (arg !== '' && !/[\s"\\]/.test(arg)) return arg;
  return `"${arg.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** Joins arguments into iptables-restore text. */
export function joinArgs(args: readonly string[]): string {
  return args.map(quoteArg).join(' ');
}

/** The target of a rule's arguments (`-j X` / `-g X`), if any. */
export function ruleTarget(tokens: readonly string[]): { readonly target: string; readonly goto: boolean } | undefined {
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i];
    if (t === '-j' || t === '--jump') return { target: tokens[i + 1] as string, goto: false };
    if (t === '-g' || t === '--goto') return { target: tokens[i + 1] as string, goto: true };
  }
  return undefined;
}

/**
 * The chain names declared (`:CHAIN …` lines) in iptables-save output of one table: upstream's
 * utiliptables.GetChainsFromTable.
 */
export function chainsFromSave(saveOutput: string): Set<string> {
  const chains = new Set<string>();
  for (const raw of saveOutput.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith(':')) continue;
    const end = line.indexOf(' ');
    chains.add(end < 0 ? line.slice(1) : line.slice(1, end));
  }
  return chains;
}
