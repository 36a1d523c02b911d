/**
 * Splitting and joining iptables-restore lines: whitespace separates arguments, double quotes group
 * them (`--comment "a b"`), and a backslash inside quotes escapes the next character, as
 * iptables-restore's argument parser does.
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
        inQuotes = false;
      } else {
        current += ch;
      }
      continue;
    }
    if (ch === '"') {
      inQuotes = true;
      inToken = true;
    } else if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n') {
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

/** Quotes one argument for an iptables-restore line when it needs it (whitespace, quotes, empty). */
export function quoteArg(arg: string): string {
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
