/** An inclusive range of host ports. */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

/**
 * utilnet.ParsePortRange as kube-proxy read --proxy-port-range: "N", "N-M" or "N+K" (inclusive)
 * within 0..65535. Returns null for "", "0" and "0-0" ("let the kernel choose"); throws on
 * anything malformed.
 */
export function parsePortRange(text: string): PortRange | null {
  const v = text.trim();
  if (v === '') return null;
  const m = /^(\d+)(?:([-+])(\d+))?$/.exec(v);
  if (!m) throw new Error(`invalid port range "${text}"`);
  const min = Number(m[1]);
  const other = m[3] === undefined ? undefined : Number(m[3]);
  const max = other === undefined ? min : m[2] === '+' ? min + other : other;
  if (min > 65535 || max > 65535 || max < min) throw new Error(`invalid port range "${text}"`);
  if (min === 0 && max === 0) return null;
  return { min, max };
}
