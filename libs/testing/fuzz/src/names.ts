/**
 * Kubernetes name grammars (apimachinery's IsDNS1035Label, IsDNS1123Label, IsDNS1123Subdomain,
 * IsValidLabelValue, IsValidPortName) as predicates and as generators: the generators make valid
 * names, the predicates let the hostile generators prove that what they put in a field is invalid.
 */
import fc from 'fast-check';
import { hostileString } from './hostile-strings.js';

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const PORT_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

export function isDns1035Label(s: unknown): boolean {
  return typeof s === 'string' && s.length <= 63 && DNS1035_LABEL.test(s);
}

export function isDns1123Label(s: unknown): boolean {
  return typeof s === 'string' && s.length <= 63 && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: unknown): boolean {
  return typeof s === 'string' && s.length <= 253 && s.split('.').every((part) => DNS1123_LABEL.test(part));
}

export function isLabelValue(s: unknown): boolean {
  return typeof s === 'string' && s.length <= 63 && LABEL_VALUE.test(s);
}

/** IANA_SVC_NAME: at most 15 characters, lowercase alphanumerics and '-', at least one letter, no '--', no '-' at the ends. */
export function isPortName(s: unknown): boolean {
  return typeof s === 'string' && s.length <= 15 && PORT_NAME.test(s) && /[a-z]/.test(s) && !s.includes('--');
}

/** Builds an arbitrary once: fc.stringMatching compiles its regex on every call, which is slow. */
function once<T>(make: () => fc.Arbitrary<T>): () => fc.Arbitrary<T> {
  let arb: fc.Arbitrary<T> | undefined;
  return () => (arb ??= make());
}

/** A hostile string that is certainly not valid for `valid`. */
export function hostileFor(valid: (s: string) => boolean): fc.Arbitrary<string> {
  return hostileString().filter((s) => !valid(s));
}

/** A lowercase DNS-1035 label of 1–20 characters (Service names). */
export const dnsLabel = once(() => fc.stringMatching(/^[a-z]([a-z0-9-]{0,18}[a-z0-9])?$/).filter(isDns1035Label));

/** A Service name of the maximal length (63), to exercise long comments and chain-name hashing. */
export const longDnsLabel = once(() => fc.stringMatching(/^[a-z][a-z0-9]{62}$/));

/** A port name: 1–15 characters, IANA_SVC_NAME. */
export const portName = once(() => fc.stringMatching(/^[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,7})?$/).filter(isPortName));

/** Namespaces: a few fixed ones (so services share them) and the occasional generated one. */
export const namespaceName = once(() =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('default', 'kube-system', 'ns1', 'team-a') },
    { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/).filter(isDns1123Label) },
  ),
);

/** A label value (zones, node names in hints). */
export const labelValue = once(() => fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9_.-]{0,20}[A-Za-z0-9])?$/).filter(isLabelValue));
