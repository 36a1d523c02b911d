import { flatString } from './flat-strings.js';

describe('flatString', () => {
  it('returns the same value for a string built piece by piece, and for empty and flat strings', () => {
    let rule = 'meta l4proto tcp dnat ip addr . port to numgen random mod 3 map { ';
    for (let i = 0; i < 3; i++) rule += `${i === 0 ? '' : ' , '}${i} : 10.1.0.${i} . 80`;
    rule += ' }';
    const copy = rule.split('').join('');
    expect(flatString(rule)).toBe(copy);
    expect(flatString('')).toBe('');
    expect(flatString('goto x')).toBe('goto x');
  });
});
