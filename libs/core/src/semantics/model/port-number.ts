/** A TCP/UDP/SCTP port number: an integer in 1..65535. */
export function isPortNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}
