/**
 * The masquerade mark of --iptables-masquerade-bit, in the text upstream's IPVS NewProxier builds:
 * `fmt.Sprintf("%#08x", 1<<masqueradeBit)`. Go pads the digits to the width before adding "0x", so
 * bit 14 is "0x00004000" (iptables-save prints it back as 0x4000). The iptables backend has the same
 * helper; backends cannot share code except through core, and this one is a line long.
 */
import { UnsafeRestoreTextError } from '@kube-proxy/core';

export function masqueradeMark(masqueradeBit: number): string {
  if (!Number.isInteger(masqueradeBit) || masqueradeBit < 0 || masqueradeBit > 31) {
    throw new UnsafeRestoreTextError(`masquerade bit must be an integer in [0, 31], got ${String(masqueradeBit)}`);
  }
  return '0x' + (2 ** masqueradeBit).toString(16).padStart(8, '0');
}
