/**
 * The length limits nft and the kernel put on what we write, and the one cut that keeps every
 * comment within them by construction.
 *
 * Measured with nft 1.0.6 on this project's kernel, in a throwaway network namespace:
 * - a comment (on an element, a rule, a chain, a set or map) holds at most 128 BYTES: 128 passes,
 *   129 fails the whole transaction with `Error: comment too long, 128 characters maximum allowed`,
 *   and 127 ASCII characters plus `é` (128 characters, 129 bytes) fails too (nft counts bytes);
 * - a chain or set name holds at most 255 bytes (NFT_NAME_MAXLEN 256 with its NUL): 256 fails with
 *   `Numerical result out of range`.
 *
 * Names are kept within NAME_BYTES_MAX by how they are built (names/object-names.ts: a hash and a
 * readable part cut to fit). Comments are cut here, where every comment is quoted (nft-objects.ts):
 * upstream (kubernetes #139516, fixing #139515: a Service whose `namespace/name:port` is over 128
 * bytes stopped every sync) cuts the service port name it writes as element comments to
 * knftables.CommentLengthMax (128) bytes, with no mark, in syncProxyRules. We cut every comment the
 * same way, at the quoting, so no future comment can reach nft uncut. Upstream cuts Go strings by
 * byte and its names are ASCII; it is silent on multi-byte characters, so we never split one (a cut
 * falls before the character, keeping the comment valid UTF-8).
 */

/** The most bytes nft accepts in a comment. */
export const COMMENT_BYTES_MAX = 128;

/** The most bytes the kernel accepts in a chain, set or map name (NFT_NAME_MAXLEN less its NUL). */
export const NAME_BYTES_MAX = 255;

const encoder = new TextEncoder();

/** UTF-8 length of `text`, in bytes. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, never inside a character (a lone surrogate counts
 * as the 3 bytes of U+FFFD, as the encoder writes it). Returns `text` itself when it fits.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  // Hot path: every character is at most 3 bytes per UTF-16 unit, so short text always fits.
  if (text.length * 3 <= maxBytes || utf8Length(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = encoder.encode(ch).length;
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** A comment as nft accepts it: cut to COMMENT_BYTES_MAX bytes (see the module header). */
export function nftCommentText(text: string): string {
  return truncateUtf8(text, COMMENT_BYTES_MAX);
}
