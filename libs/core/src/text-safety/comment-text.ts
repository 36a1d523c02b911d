/**
 * Comment text built from strings that come from the API (namespace, Service name, port name, …),
 * safe as ONE bare token anywhere a rule comment goes: unquoted (`--comment ns/svc:port`, the way
 * upstream writes some of them) or inside the double quotes of `--comment "ns/svc:port cluster IP"`,
 * in iptables-restore input, and equally in ipset restore (`comment "…"`), nft scripts
 * (`comment "…"`) and ipvsadm arguments.
 *
 * Defence in depth: the source edge validates objects as the API server does, so real names are DNS
 * labels and IANA service names (`[a-z0-9-]`, `.`) joined by `/` and `:`; those come out unchanged,
 * byte for byte. Anything else is percent-encoded (the UTF-8 bytes of the character as `%XX`,
 * upper-case hex), so a hostile name can never end the comment, add an argument or end the line.
 *
 * Kept as they are: `A-Z a-z 0-9 . _ - / :`. Replaced (percent-encoded), and why, from what
 * iptables 1.8.9's iptables-restore (nft and legacy, both measured in a network namespace) does:
 * - `"` opens or closes a quoted token even in the middle of a word (`ab"c d"e` → `abc d`, `e`), so
 *   it would end the comment and let the rest of the name become rule arguments (`-j ACCEPT`);
 * - `\` escapes the next character inside quotes (`\"` → `"`, `\\` → `\`, `\n` → `n`);
 * - space and tab separate arguments (outside quotes);
 * - newline ends the line: what follows is a new rule (`-A INPUT -j ACCEPT`), a `COMMIT` or a
 *   `*filter`; iptables-restore has no escape that puts a newline inside a token;
 * - NUL ends the C string: the rest of the line is silently dropped (`… --comment "x<NUL>" -j DROP`
 *   becomes a rule without its target);
 * - `\r` and other control characters are kept in the token and stored in the kernel, and
 *   iptables-save prints them raw, breaking every reader of its output (a `\r` before the newline
 *   even turns `-j ACCEPT` into the unknown target `ACCEPT\r`);
 * - `'` `#` `!` `*` `%` and every other printable character are harmless to iptables-restore
 *   mid-line, but `'` is special to iptables-save's own quoting and `%` is our escape character, so
 *   all of them are encoded rather than judged one by one: only the set above is kept;
 * - non-ASCII: the iptables renderer writes its buffers as latin1 (one byte per UTF-16 code unit),
 *   so U+010A would be written as the byte 0x0A, a newline; encoding the UTF-8 bytes keeps the text
 *   ASCII.
 *
 * Length: xt_comment holds at most 255 bytes (XT_MAX_COMMENT_LEN 256 with its NUL); iptables 1.8.9
 * silently truncates longer comments, and any argument over 1023 bytes fails the whole restore
 * ("Parameter too long!"), so one hostile name would stop every rule of every Service from being
 * programmed. The result is cut to `maxLength` characters (never inside a `%XX`) and then ends in
 * `...`; pass the room the comment's fixed words leave.
 *
 * Never empty: "" becomes `-`, so an unquoted `--comment X` always has its argument (getopt would
 * otherwise take the next option as the comment).
 */

/** The most bytes an iptables rule comment holds (xt_comment's XT_MAX_COMMENT_LEN, 256, less its NUL). */
export const COMMENT_MAX_LENGTH = 255;

/** What a truncated comment text ends in. */
export const COMMENT_TRUNCATION_MARK = '...';

/** What an empty text becomes (see the module header). */
export const EMPTY_COMMENT_TEXT = '-';

/** Characters that never need encoding; every valid Kubernetes name is made of them only. */
const KEPT_ONLY = /^[A-Za-z0-9._:/-]*$/;
const KEPT_CHAR = /[A-Za-z0-9._:/-]/;

/**
 * `text` as comment-safe ASCII (see the module header): unchanged when it holds only
 * `A-Z a-z 0-9 . _ - / :` and fits in `maxLength`, else percent-encoded and, if still too long, cut
 * to `maxLength` characters ending in `...`.
 */
export function commentText(text: string, maxLength: number = COMMENT_MAX_LENGTH): string {
  if (!Number.isInteger(maxLength) || maxLength < COMMENT_TRUNCATION_MARK.length + 1) {
    throw new RangeError(`commentText maxLength must be an integer >= ${COMMENT_TRUNCATION_MARK.length + 1}, got ${maxLength}`);
  }
  const s = String(text);
  if (s === '') return EMPTY_COMMENT_TEXT;
  // Hot path (once per Service port per sync): valid names are returned as they are.
  if (s.length <= maxLength && KEPT_ONLY.test(s)) return s;

  // Encode piece by piece so a cut never falls inside a %XX.
  const pieces: string[] = [];
  let length = 0;
  for (const ch of s) {
    const piece = KEPT_CHAR.test(ch) ? ch : percentEncode(ch);
    pieces.push(piece);
    length += piece.length;
  }
  if (length <= maxLength) return pieces.join('');
  const room = maxLength - COMMENT_TRUNCATION_MARK.length;
  let out = '';
  for (const piece of pieces) {
    if (out.length + piece.length > room) break;
    out += piece;
  }
  return out + COMMENT_TRUNCATION_MARK;
}

/** `"` + commentText(text, maxLength) + `"`: a complete `--comment` argument for iptables-restore input. */
export function quotedCommentText(text: string, maxLength: number = COMMENT_MAX_LENGTH): string {
  return `"${commentText(text, maxLength)}"`;
}

/** The UTF-8 bytes of one code point (a lone surrogate as U+FFFD) as `%XX%XX…`. */
function percentEncode(ch: string): string {
  let out = '';
  for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}
