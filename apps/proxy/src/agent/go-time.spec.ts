import { goTimeJSON } from './go-time.js';

describe('goTimeJSON', () => {
  it('writes RFC 3339 like Go, trimming the fraction', () => {
    expect(goTimeJSON(Date.UTC(2024, 0, 2, 3, 4, 5))).toBe('2024-01-02T03:04:05Z');
    expect(goTimeJSON(Date.UTC(2024, 0, 2, 3, 4, 5, 120))).toBe('2024-01-02T03:04:05.12Z');
  });

  it("writes Go's zero time for 'never'", () => {
    expect(goTimeJSON(undefined)).toBe('0001-01-01T00:00:00Z');
  });
});
