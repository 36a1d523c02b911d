import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { masqueradeMark } from './masquerade-mark.js';

describe('masqueradeMark', () => {
  it("prints 1<<bit as Go's %#08x does (digits padded to 8, then 0x)", () => {
    expect([masqueradeMark(14), masqueradeMark(0), masqueradeMark(31)]).toEqual(['0x00004000', '0x00000001', '0x80000000']);
  });

  it.each([-1, 32, 1.5, Number.NaN])('refuses bit %p', (bit) => {
    expect(() => masqueradeMark(bit)).toThrow(UnsafeRestoreTextError);
  });
});
