import { parsePortRange } from './port-range.js';

describe('parsePortRange', () => {
  it.each([
    ['300-2000', { min: 300, max: 2000 }],
    ['40000', { min: 40000, max: 40000 }],
    ['1000+10', { min: 1000, max: 1010 }],
    [' 5-5 ', { min: 5, max: 5 }],
    ['0-10', { min: 0, max: 10 }],
  ])('reads %s', (text, want) => {
    expect(parsePortRange(text)).toEqual(want);
  });

  it.each(['', '0', '0-0'])('reads %j as "the kernel chooses"', (text) => {
    expect(parsePortRange(text)).toBeNull();
  });

  it.each(['2000-1000', '65536', '65000+1000', 'a-b', '1-2-3', '-5'])('rejects %s', (text) => {
    expect(() => parsePortRange(text)).toThrow(/invalid port range/);
  });
});
