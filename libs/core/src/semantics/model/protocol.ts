/** L4 protocols a Service port can carry (v1.Protocol). */
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** Address families, spelled as in v1.IPFamily. A proxier serves exactly one. */
export type IPFamily = 'IPv4' | 'IPv6';

export const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];

export function isProtocol(value: unknown): value is Protocol {
  return value === 'TCP' || value === 'UDP' || value === 'SCTP';
}
