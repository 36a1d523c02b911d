/*
 * Render safety: what every backend's renderer uses so that a string from the API can never end a
 * comment or a line of the text handed to a kernel tool (iptables-restore; later ipset, ipvsadm, nft).
 */
export { COMMENT_MAX_LENGTH, COMMENT_TRUNCATION_MARK, EMPTY_COMMENT_TEXT, commentText, quotedCommentText } from './comment-text.js';
export {
  RESTORE_LINE_MAX_LENGTH,
  UnsafeRestoreTextError,
  assertRestoreLine,
  assertRestorePayload,
  restoreLineProblem,
} from './restore-text.js';
