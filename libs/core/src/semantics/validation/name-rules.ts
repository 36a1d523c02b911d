import { byteLength } from './json-shape.js';

/**
 * The string formats of k8s.io/apimachinery/pkg/util/validation that the API server applies to the
 * fields kube-proxy reads: DNS labels and subdomains (RFC 1123, RFC 1035), IANA service names (port
 * names), qualified names (label keys) and label values. Each returns the list of problems ([] when
 * valid), as apimachinery's Is* functions do. The checks are written as character-class scans rather
 * than the upstream regular expressions so that a megabyte-long hostile string costs linear time.
 */

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const DNS1035_LABEL_MAX_LENGTH = 63;
export const IANA_SVC_NAME_MAX_LENGTH = 15;
export const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;

const isLowerAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
const isAlnum = (c: string): boolean => isLowerAlnum(c) || (c >= 'A' && c <= 'Z');

function allChars(text: string, ok: (c: string) => boolean): boolean {
  for (const c of text) if (!ok(c)) return false;
  return true;
}

function maxLength(max: number): string {
  return `must be no more than ${max} characters`;
}

/** `[a-z0-9]([-a-z0-9]*[a-z0-9])?` */
function matchesDNS1123Label(text: string): boolean {
  return (
    text.length > 0 &&
    allChars(text, (c) => isLowerAlnum(c) || c === '-') &&
    isLowerAlnum(text[0]) &&
    isLowerAlnum(text[text.length - 1])
  );
}

/** DNS-1123 labels joined by dots. */
function matchesDNS1123Subdomain(text: string): boolean {
  return text.split('.').every(matchesDNS1123Label);
}

/** `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of a qualified name, a non-empty label value. */
function matchesQualifiedNamePart(text: string): boolean {
  return (
    text.length > 0 &&
    allChars(text, (c) => isAlnum(c) || c === '-' || c === '_' || c === '.') &&
    isAlnum(text[0]) &&
    isAlnum(text[text.length - 1])
  );
}

/** RFC 1123 label (namespaces, Service port names, endpoint hostnames): lower-case alphanumerics and '-', at most 63. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLength(DNS1123_LABEL_MAX_LENGTH));
  if (!matchesDNS1123Label(value)) {
    errs.push(
      matchesDNS1123Subdomain(value)
        ? 'must not contain dots'
        : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')",
    );
  }
  return errs;
}

/** RFC 1123 subdomain (EndpointSlice and Node names): dot-separated RFC 1123 labels, at most 253. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLength(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!matchesDNS1123Subdomain(value)) {
    errs.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
    );
  }
  return errs;
}

/** RFC 1035 label (Service names): an RFC 1123 label that starts with a letter, at most 63. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLength(DNS1035_LABEL_MAX_LENGTH));
  if (!matchesDNS1123Label(value) || !(value[0] >= 'a' && value[0] <= 'z')) {
    errs.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123')",
    );
  }
  return errs;
}

/**
 * IANA_SVC_NAME (RFC 6335; apimachinery IsValidPortName), the format of a named targetPort: 1–15
 * characters of [-a-z0-9], at least one letter, no leading, trailing or doubled '-'.
 */
export function isIANAServiceName(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > IANA_SVC_NAME_MAX_LENGTH) errs.push(maxLength(IANA_SVC_NAME_MAX_LENGTH));
  if (!/^[-a-z0-9]+$/.test(value)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(value)) errs.push('must contain at least one letter (a-z)');
  if (value.includes('--')) errs.push('must not contain consecutive hyphens');
  if (value.length > 0 && (value.startsWith('-') || value.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

/**
 * A qualified name (label and annotation keys, appProtocol): an optional DNS-subdomain prefix and '/',
 * then a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
  } else {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) {
    errs.push('name part must be non-empty');
  } else {
    if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLength(QUALIFIED_NAME_MAX_LENGTH)}`);
    if (!matchesQualifiedNamePart(name)) {
      errs.push(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')",
      );
    }
  }
  return errs;
}

/** A label value (and an EndpointSlice zone): empty, or at most 63 characters shaped like a qualified name's name part. */
export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLength(LABEL_VALUE_MAX_LENGTH));
  if (value !== '' && !matchesQualifiedNamePart(value)) {
    errs.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')",
    );
  }
  return errs;
}

/**
 * apimachinery IsFullyQualifiedDomainName (FQDN EndpointSlice addresses): an optional trailing dot,
 * then an RFC 1123 subdomain of at least two labels.
 */
export function isFullyQualifiedDomainName(value: string): string[] {
  if (value.length === 0) return ['Required value'];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length > 0) return sub;
  if (name.split('.').length < 2) return ['should be a domain with at least two segments separated by dots'];
  return [];
}
