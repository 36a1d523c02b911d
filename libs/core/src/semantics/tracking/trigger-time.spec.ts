import { parseRFC3339 } from './trigger-time.js';

describe('parseRFC3339', () => {
  it.each([
    ['2024-01-02T03:04:05Z', Date.UTC(2024, 0, 2, 3, 4, 5)],
    ['2024-01-02T03:04:05.5Z', Date.UTC(2024, 0, 2, 3, 4, 5, 500)],
    ['2024-01-02T03:04:05.123456789Z', Date.UTC(2024, 0, 2, 3, 4, 5, 123)],
    ['2024-01-02T03:04:05+02:00', Date.UTC(2024, 0, 2, 1, 4, 5)],
    ['2024-01-02T03:04:05-00:30', Date.UTC(2024, 0, 2, 3, 34, 5)],
    ['2024-01-02t03:04:05z', Date.UTC(2024, 0, 2, 3, 4, 5)],
  ])('%s', (text, expected) => {
    expect(parseRFC3339(text)).toBe(expected);
  });

  it.each(['', 'yesterday', '2024-01-02', '2024-01-02T03:04:05', '2024-13-02T03:04:05Z', '2024-01-02T25:04:05Z', '2024-01-02T03:04:05.Z'])(
    'rejects %j',
    (text) => {
      expect(parseRFC3339(text)).toBeUndefined();
    },
  );
});
