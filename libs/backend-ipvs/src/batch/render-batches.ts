/**
 * The whole desired state as restore input: an `ipvsadm --restore` batch (every virtual server,
 * each followed by its real servers, in key order: the text `ipvsadm --save -n` prints for that
 * state, modulo the kernel's own ordering) and an `ipset restore` script (each set's create line
 * followed by its entries). Both are checked by core's assertRestorePayload (one line per line
 * written, no control characters) before they are returned.
 */
import { assertRestorePayload } from '@kube-proxy/core';
import type { DesiredIpvsState } from '../state/ipvs-state.js';
import { addEntryLine, createSetLine } from './ipset-text.js';
import { addServerLine, addServiceLine } from './ipvsadm-text.js';

/** Lines joined with a trailing newline, checked (the empty batch is ""). */
export function checkedBatch(lines: readonly string[]): string {
  const text = lines.length === 0 ? '' : lines.join('\n') + '\n';
  assertRestorePayload(text, lines.length);
  return text;
}

export function renderIpvsadmRestore(state: DesiredIpvsState): string {
  const lines: string[] = [];
  for (const vs of state.virtualServers) {
    lines.push(addServiceLine(vs));
    for (const rs of vs.realServers) lines.push(addServerLine(vs, rs));
  }
  return checkedBatch(lines);
}

export function renderIpsetRestore(state: DesiredIpvsState): string {
  const lines: string[] = [];
  for (const { set, entries } of state.ipsets) {
    lines.push(createSetLine(set));
    for (const e of entries) lines.push(addEntryLine(set, e));
  }
  return checkedBatch(lines);
}
