/**
 * Core's render-safety check for every batch a kernel client hands to a tool (or applies in
 * memory): each line within the length limit, no NUL or CR, the payload newline-terminated and made
 * of exactly the lines it says. Text that fails never reaches a process.
 */
import { assertRestorePayload } from '@kube-proxy/core';

/** Throws core's UnsafeRestoreTextError unless `payload` is safe restore text of `lines` lines (default: as many as it has). */
export function guardPayload(payload: string, lines?: number): void {
  let n = 0;
  for (let i = payload.indexOf('\n'); i >= 0; i = payload.indexOf('\n', i + 1)) n++;
  assertRestorePayload(payload, lines ?? n);
}
