import { escapeXml, formatNumber, formatSeconds, formatServices, px } from './svg-text.js';

describe('SVG text', () => {
  it('escapes markup and replaces characters XML cannot hold', () => {
    expect(escapeXml(`a<b>&"c'`)).toBe('a&lt;b&gt;&amp;&quot;c&apos;');
    expect(escapeXml('bell\u0007 tab\t')).toBe('bell\ufffd tab\t');
    expect(escapeXml('lone \ud800 surrogate, pair \ud83d\ude00')).toBe('lone \ufffd surrogate, pair \ud83d\ude00');
  });

  it('formats numbers without locale or float noise', () => {
    expect(formatNumber(45000)).toBe('45,000');
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(1234.567)).toBe('1,235');
    expect(formatNumber(12.34)).toBe('12.3');
    expect(formatServices(2500)).toBe('2.5k');
    expect(formatServices(500)).toBe('500');
    expect(formatSeconds(0.012)).toBe('12 ms');
    expect(formatSeconds(9.1)).toBe('9.1 s');
    expect(formatSeconds(394)).toBe('394 s');
    expect(formatSeconds(1000)).toBe('1,000 s');
    expect(px(-0.001)).toBe('0');
    expect(px(1 / 3)).toBe('0.33');
  });
});
