const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 timestamp (with optional nanoseconds, as Go's time.RFC3339Nano writes) into
 * milliseconds since the epoch; sub-millisecond digits are dropped. Returns undefined when malformed.
 * Written out rather than left to Date.parse, whose acceptance of extra fraction digits and of
 * non-ISO forms varies between engines.
 */
export function parseRFC3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, zulu, sign, oh, om] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  let ms = Date.UTC(Number(y), month - 1, day, hour, minute, second);
  if (frac !== undefined) ms += Number(frac.padEnd(3, '0').slice(0, 3));
  if (zulu === undefined) {
    const offset = (Number(oh) * 60 + Number(om)) * 60_000;
    ms += sign === '+' ? -offset : offset;
  }
  return Number.isFinite(ms) ? ms : undefined;
}
