/** Proxy modes the app ships with: a plugin with one of these names would be refused at startup. */
export const BUILTIN_BACKENDS: readonly string[] = ['iptables', 'ipvs', 'nftables', 'userspace'];

/**
 * Why `name` cannot name a new backend, or undefined when it can. It becomes the --proxy-mode value,
 * a directory, an npm package name and (camel-cased) TypeScript identifiers: an RFC 1035 label (the
 * rule Service names follow) is valid in all four, and the leading letter keeps the identifiers legal.
 */
export function backendNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'a name is required';
  if (name.length > 63) return `"${name}" is ${name.length} characters long; a DNS label has at most 63`;
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    return `"${name}" is not a lower-case DNS label: use a-z, 0-9 and "-", starting with a letter and not ending with "-" (e.g. my-mode)`;
  }
  if (BUILTIN_BACKENDS.includes(name)) return `"${name}" is a built-in proxy mode; pick another name`;
  return undefined;
}
