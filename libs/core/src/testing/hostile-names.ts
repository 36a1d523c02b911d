/**
 * Test vectors for every renderer's hostile-input tests (issue 10): names that, written into a rule
 * comment or a batch line as they are, end the comment or the line. The source edge rejects them as
 * the API server would; renderer tests feed them in directly, bypassing that validation, to show the
 * renderer is safe on its own. Each is a namespace, a Service name and a port name.
 */
export interface HostileName {
  readonly label: string;
  readonly namespace: string;
  readonly name: string;
  readonly port: string;
}

export const HOSTILE_NAMES: readonly HostileName[] = [
  // Found from outside: yielded `-A INPUT -j ACCEPT` and `--comment "default/evil" -j ACCEPT`.
  { label: 'rule injection (issue 10)', namespace: 'default', name: 'evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#', port: 'x" -j ACCEPT #' },
  { label: 'NUL byte', namespace: 'default', name: 'nul\0" -j ACCEPT', port: 'p\0' },
  { label: 'tab', namespace: 'default', name: 'tab\t-j\tACCEPT', port: 'p\tq' },
  { label: 'unclosed quote', namespace: 'default', name: 'open"quote', port: '"' },
  { label: 'backslashes', namespace: 'default', name: 'back\\slash\\"', port: '\\' },
  { label: 'carriage return', namespace: 'default', name: 'cr\r\n-A INPUT -j ACCEPT\r', port: 'p\r' },
  { label: 'very long name and port', namespace: 'default', name: 'x'.repeat(5000), port: 'y'.repeat(300) },
  { label: 'very long namespace', namespace: 'n'.repeat(1100), name: 'web', port: 'http' },
  { label: 'non-ASCII', namespace: 'default', name: 'café-名前-🚀', port: 'ü' },
  // latin1 output keeps the low byte of each UTF-16 code unit: U+010A is written as 0x0A.
  { label: 'latin1 alias of a newline', namespace: 'default', name: 'a\u010A-A INPUT -j ACCEPT\u010A', port: '\u010D' },
  { label: 'COMMIT and *filter', namespace: 'default', name: 'x\nCOMMIT\n*filter\n:INPUT DROP [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n*nat', port: 'COMMIT' },
  { label: 'hostile namespace', namespace: 'kube-system" -j ACCEPT\n#', name: 'web', port: 'http' },
  { label: 'empty name and port', namespace: 'default', name: '', port: '' },
];

/** The benign name the hostile renders are compared with. */
export const BENIGN_NAME: HostileName = { label: 'benign', namespace: 'default', name: 'web', port: 'http' };
