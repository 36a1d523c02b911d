import type { RuleTarget } from './saved-rule.js';
import { savedChain, type SavedTables } from './saved-tables.js';

/** The packet mark after a `-j MARK …` target (set-xmark, set-mark, or-mark, and-mark, xor-mark). */
export function applyMark(mark: number, target: RuleTarget): number {
  for (const [option, value] of target.options) {
    const [v, m] = value.split('/');
    const num = Number(v) >>> 0;
    const mask = m === undefined ? 0xffffffff : Number(m) >>> 0;
    if (Number.isNaN(num) || Number.isNaN(mask)) continue;
    switch (option) {
      case '--set-xmark':
        return (((mark & ~mask) >>> 0) ^ num) >>> 0;
      case '--set-mark':
        return ((mark & ~mask) | num) >>> 0;
      case '--or-mark':
        return (mark | num) >>> 0;
      case '--and-mark':
        return (mark & num) >>> 0;
      case '--xor-mark':
        return (mark ^ num) >>> 0;
    }
  }
  return mark;
}

/**
 * The bit a mark chain sets (KUBE-MARK-MASQ's `--or-mark 0x4000` or `--set-xmark 0x4000/0x4000`):
 * --iptables-masquerade-bit may have moved it from upstream's default.
 */
export function markBitOf(tables: SavedTables, chain: string, fallback: number): number {
  for (const rule of savedChain(tables, 'nat', chain)?.rules ?? []) {
    if (rule.target?.name !== 'MARK') continue;
    const bit = applyMark(0, rule.target);
    if (bit !== 0) return bit;
  }
  return fallback;
}
