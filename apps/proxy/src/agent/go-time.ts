/**
 * A time as Go's encoding/json writes a time.Time (RFC 3339 with nanoseconds, trailing zeros of the
 * fraction dropped), in UTC. `undefined` is Go's zero time, which upstream prints before the first sync.
 */
export function goTimeJSON(ms: number | undefined): string {
  if (ms === undefined) return '0001-01-01T00:00:00Z';
  const iso = new Date(ms).toISOString(); // 2024-01-01T00:00:00.120Z
  return iso.replace(/\.(\d+)Z$/, (_m, frac: string) => {
    const trimmed = frac.replace(/0+$/, '');
    return trimmed === '' ? 'Z' : `.${trimmed}Z`;
  });
}
