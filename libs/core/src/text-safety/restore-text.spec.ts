import { assertRestoreLine, assertRestorePayload, RESTORE_LINE_MAX_LENGTH, restoreLineProblem, UnsafeRestoreTextError } from './restore-text.js';

const RULE = '-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -m tcp -p tcp -d 10.96.0.10 --dport 80 -j KUBE-SVC-ABC';

describe('assertRestoreLine', () => {
  it('accepts a rendered rule', () => {
    expect(restoreLineProblem(RULE)).toBeUndefined();
    expect(() => assertRestoreLine(RULE)).not.toThrow();
  });

  it.each([
    ['a newline', `${RULE}\n-A INPUT -j ACCEPT`, /newline/],
    ['a carriage return', `${RULE}\r`, /carriage return/],
    ['a NUL byte', `-A X -m comment --comment "a\0" -j DROP`, /NUL/],
    ['another control character', '-A X -m comment --comment a\u001bb', /control character 0x1b/],
    ['a non-ASCII character', '-A X -m comment --comment caf\u00e9', /non-ASCII character U\+00E9/],
    ['a character written as a newline byte by latin1 (U+010A)', '-A X -m comment --comment a\u010Ab', /U\+010A/],
  ])('refuses a line with %s', (_label, line, reason) => {
    expect(() => assertRestoreLine(line, 7)).toThrow(UnsafeRestoreTextError);
    expect(() => assertRestoreLine(line, 7)).toThrow(reason);
    expect(() => assertRestoreLine(line, 7)).toThrow(/line 7/);
  });

  it('refuses a line longer than iptables-restore reads as one line', () => {
    const long = `-A X -m comment --comment ${'a'.repeat(RESTORE_LINE_MAX_LENGTH)}`;
    expect(restoreLineProblem(long)).toMatch(/characters long/);
    expect(restoreLineProblem('a'.repeat(RESTORE_LINE_MAX_LENGTH))).toBeUndefined();
  });
});

describe('assertRestorePayload', () => {
  const payload = `*filter\n:KUBE-SERVICES - [0:0]\n${RULE}\nCOMMIT\n`;

  it('accepts a payload as a string, a Buffer and chunks, and counts its lines', () => {
    expect(() => assertRestorePayload(payload, 4)).not.toThrow();
    expect(() => assertRestorePayload(Buffer.from(payload, 'latin1'), 4)).not.toThrow();
    const bytes = Buffer.from(payload, 'latin1');
    // Lines may span chunk boundaries.
    expect(() => assertRestorePayload([bytes.subarray(0, 5), bytes.subarray(5, 40), bytes.subarray(40)], 4)).not.toThrow();
    expect(() => assertRestorePayload('', 0)).not.toThrow();
  });

  it('refuses a payload with more lines than were written (a line carried a newline)', () => {
    const injected = Buffer.from(`*filter\n${RULE.replace('cluster IP', 'x\n-A INPUT -j ACCEPT\n#')}\nCOMMIT\n`, 'latin1');
    expect(() => assertRestorePayload(injected, 3)).toThrow(/5 lines where 3 were written/);
    expect(() => assertRestorePayload(injected.toString('latin1'), 3)).toThrow(UnsafeRestoreTextError);
  });

  it('refuses NUL and carriage-return bytes anywhere', () => {
    expect(() => assertRestorePayload(Buffer.from('*filter\n-A X -j DROP\0\nCOMMIT\n', 'latin1'))).toThrow(/NUL/);
    expect(() => assertRestorePayload([Buffer.from('*filter\n'), Buffer.from('-A X -j ACCEPT\r\nCOMMIT\n')])).toThrow(/carriage return/);
  });

  it('refuses an over-long line, also when it spans chunks', () => {
    const half = Buffer.from('a'.repeat(RESTORE_LINE_MAX_LENGTH / 2 + 1));
    expect(() => assertRestorePayload([Buffer.from('*filter\n'), half, half, Buffer.from('\nCOMMIT\n')])).toThrow(/line 2 is/);
    expect(() => assertRestorePayload(`*filter\n${'a'.repeat(RESTORE_LINE_MAX_LENGTH + 1)}\nCOMMIT\n`)).toThrow(/characters long/);
  });

  it('refuses a payload that does not end with a newline', () => {
    expect(() => assertRestorePayload('*filter\nCOMMIT')).toThrow(/end with a newline/);
    expect(() => assertRestorePayload(Buffer.from('*filter\nCOMMIT'))).toThrow(/end with a newline/);
  });
});
