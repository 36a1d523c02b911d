/**
 * Hostile text for the fuzz generators: strings that a rule renderer must never let out of a
 * comment (quotes, newlines, NUL, CR, tabs, iptables-restore syntax like `-j ACCEPT` or `COMMIT`),
 * over-long strings, and garbage values of the wrong JSON type. Every hostile string is invalid as a
 * Kubernetes name, label value, port name, protocol, IP or CIDR (each contains a character outside
 * `[A-Za-z0-9._-]` or is longer than 63 characters), so a generator that puts one into such a field
 * knows the object is invalid.
 */
import fc from 'fast-check';

/** Fragments that each, alone, break a name and attack the iptables-restore line syntax. */
export const HOSTILE_FRAGMENTS: readonly string[] = [
  '"',
  "'",
  '\n',
  '\r',
  '\r\n',
  '\0',
  '\t',
  ' ',
  '\\',
  '\\"',
  '" -j ACCEPT',
  '" -j ACCEPT "',
  ' -j ACCEPT',
  '\n-A KUBE-SERVICES -j ACCEPT\n',
  '\nCOMMIT\n*filter\n',
  '\n:KUBE-FUZZ - [0:0]',
  '-A INPUT -j DROP',
  '#',
  '$(reboot)',
  '`id`',
  ';rm -rf /',
  '%s%n',
  '\u00fc',
  '\u{1F642}',
  '\u202e',
  '\u007f',
  '\u0085',
  '\u2028',
  'a'.repeat(64),
  'x'.repeat(300),
  '\\" -j ACCEPT \\"',
  '"""',
  '--comment',
];

/** Words mixed into hostile strings so they look like names too. */
const WORDS = ['web', 'kube', 'svc', 'default', 'KUBE-SERVICES', 'ACCEPT', '10.96.0.1', '80'];

/** One hostile string: 1–4 pieces, at least one of them a hostile fragment. */
export function hostileString(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...HOSTILE_FRAGMENTS), fc.array(fc.oneof(fc.constantFrom(...HOSTILE_FRAGMENTS), fc.constantFrom(...WORDS)), { maxLength: 3 }), fc.nat({ max: 3 }))
    .map(([bad, rest, at]) => {
      const parts = [...rest];
      parts.splice(Math.min(at, parts.length), 0, bad);
      return parts.join('');
    });
}

/** A value of the wrong shape for almost any field: null, numbers, booleans, arrays, objects, hostile strings. */
export function garbageValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant(null),
    fc.constantFrom(0, -1, 1.5, 65536, Number.MAX_SAFE_INTEGER, Number.NaN),
    fc.boolean(),
    fc.constant([]),
    fc.constant([null]),
    fc.constant({}),
    fc.constant({ nested: { deeper: ['x'] } }),
    hostileString(),
  );
}

/** A value that is neither an object nor undefined: for "an array/scalar where an object belongs". */
export function nonObjectValue(): fc.Arbitrary<unknown> {
  return fc.oneof(fc.constant(null), fc.constantFrom(0, 42, -1), fc.boolean(), fc.constant([]), fc.constant(['spec']), hostileString());
}

/** A value that is not an array (for fields that must be lists). */
export function nonArrayValue(): fc.Arbitrary<unknown> {
  return fc.oneof(fc.constantFrom(0, 42), fc.boolean(), fc.constant({}), fc.constant({ 0: 'x' }), hostileString());
}
