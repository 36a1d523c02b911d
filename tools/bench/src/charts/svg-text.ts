/**
 * Text for SVG output: XML escaping and the number formats the charts print. Every figure goes through
 * these, so the same data gives the same bytes (no locale, no float noise).
 */

const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * Text content or an attribute value. Characters XML 1.0 forbids (C0 controls other than tab, newline
 * and carriage return, lone surrogates) become U+FFFD: a label from a data file must not make the
 * whole chart unparseable.
 */
export function escapeXml(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Pixel coordinates: two decimals, no trailing zeros, never `-0`. */
export function px(v: number): string {
  const r = Math.round(v * 100) / 100;
  return String(r === 0 ? 0 : r);
}

/** 1,000 / 45,000 / 0.5: thousands separated, at most 3 significant decimals. */
export function formatNumber(v: number): string {
  if (Number.isInteger(v)) return groupThousands(v);
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : Math.abs(v) >= 1 ? 2 : 3;
  const fixed = v.toFixed(digits).replace(/\.?0+$/, '');
  const [int, frac] = fixed.split('.');
  const grouped = groupThousands(Number(int));
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

function groupThousands(v: number): string {
  const sign = v < 0 ? '-' : '';
  const digits = String(Math.abs(Math.trunc(v)));
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A service count on an axis: 1k, 2.5k, 45k, 500. */
export function formatServices(n: number): string {
  if (n >= 1000) return `${formatNumber(n / 1000)}k`;
  return formatNumber(n);
}

/** A duration given in seconds: 5 ms, 1.5 s, 1,000 s (seconds throughout, so decade ticks stay round). */
export function formatSeconds(s: number): string {
  if (s < 1) return `${formatNumber(s * 1000)} ms`;
  return `${formatNumber(s)} s`;
}
