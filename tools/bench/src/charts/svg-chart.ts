/**
 * A line chart as plain SVG text (no chart library): log x (services), log or linear y, a legend
 * under the plot, a title and a footer naming the data. Built for GitHub's README rendering, where an
 * <img> SVG gets no scripts and no external fonts: everything is inline attributes and generic fonts.
 */
import { decadeDomain, linearScaleFromZero, logScale, type AxisScale } from './axis-scale.js';
import { escapeXml, formatNumber, formatServices, px } from './svg-text.js';

/** How a line is drawn: measured (solid), the kernel tool's floor (dotted), an issue bound (dashed, per point), published figures (marks only). */
export type LineStyle = 'solid' | 'dotted' | 'bound' | 'marks';
export type Marker = 'circle' | 'square' | 'diamond' | 'none';

export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  /** Shown beside the mark (e.g. `×1` for another endpoint count). */
  readonly note?: string;
  /** Hover text. */
  readonly title: string;
}

export interface ChartLine {
  readonly label: string;
  readonly color: string;
  readonly style: LineStyle;
  readonly marker: Marker;
  readonly points: readonly ChartPoint[];
}

export interface ChartSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly y: 'log' | 'linear';
  /** Tick label of a y value. */
  readonly formatY: (v: number) => string;
  /** The x domain always covers these (the 1k…45k), whatever the data. */
  readonly xSpan: readonly [number, number];
  readonly lines: readonly ChartLine[];
  readonly footer: readonly string[];
}

const WIDTH = 760;
const PLOT = { left: 78, right: 740, top: 48, bottom: 368 };
const LEGEND_ROW = 18;
const FOOTER_ROW = 15;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';
/** Legend text is cut here: ~6.3 px per character at 12 px leaves room for the sample line. */
const LABEL_MAX = 100;
/** Half the width of a bound's dashed segment, in decades of x. */
const BOUND_HALF_DECADES = 0.12;

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function scales(spec: ChartSpec): { x: AxisScale; y: AxisScale } | null {
  const pts = spec.lines.flatMap((l) => l.points).filter((p) => p.x > 0 && (spec.y === 'linear' || p.y > 0));
  if (pts.length === 0) return null;
  const xs = pts.map((p) => p.x);
  const xMin = Math.min(spec.xSpan[0], ...xs) / 1.25;
  const xMax = Math.max(spec.xSpan[1], ...xs) * 1.2;
  const x = logScale(xMin, xMax, PLOT.left, PLOT.right);
  const ys = pts.map((p) => p.y);
  if (spec.y === 'linear') return { x, y: linearScaleFromZero(Math.max(...ys), PLOT.bottom, PLOT.top) };
  const [lo, hi] = decadeDomain(Math.min(...ys), Math.max(...ys));
  return { x, y: logScale(lo, hi, PLOT.bottom, PLOT.top) };
}

function axes(spec: ChartSpec, x: AxisScale, y: AxisScale): string[] {
  const out: string[] = [];
  out.push(`<rect x="${PLOT.left}" y="${PLOT.top}" width="${PLOT.right - PLOT.left}" height="${PLOT.bottom - PLOT.top}" fill="#ffffff" stroke="#888888"/>`);
  for (const t of x.ticks) {
    const at = px(x.at(t));
    out.push(`<line x1="${at}" y1="${PLOT.top}" x2="${at}" y2="${PLOT.bottom}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${at}" y="${PLOT.bottom + 16}" text-anchor="middle" font-size="11" fill="#333333">${escapeXml(formatServices(t))}</text>`);
  }
  for (const t of y.ticks) {
    const at = px(y.at(t));
    out.push(`<line x1="${PLOT.left}" y1="${at}" x2="${PLOT.right}" y2="${at}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${PLOT.left - 6}" y="${at}" dy="4" text-anchor="end" font-size="11" fill="#333333">${escapeXml(spec.formatY(t))}</text>`);
  }
  out.push(`<text x="${px((PLOT.left + PLOT.right) / 2)}" y="${PLOT.bottom + 34}" text-anchor="middle" font-size="12" fill="#222222">${escapeXml(spec.xLabel)}</text>`);
  const midY = px((PLOT.top + PLOT.bottom) / 2);
  out.push(`<text x="16" y="${midY}" transform="rotate(-90 16 ${midY})" text-anchor="middle" font-size="12" fill="#222222">${escapeXml(spec.yLabel)}</text>`);
  return out;
}

function marker(kind: Marker, cx: number, cy: number, color: string): string {
  const x = px(cx);
  const y = px(cy);
  switch (kind) {
    case 'circle':
      return `<circle cx="${x}" cy="${y}" r="3.5" fill="${color}"/>`;
    case 'square':
      return `<rect x="${px(cx - 3.5)}" y="${px(cy - 3.5)}" width="7" height="7" fill="#ffffff" stroke="${color}" stroke-width="1.5"/>`;
    case 'diamond':
      return `<path d="M${x} ${px(cy - 5.5)}L${px(cx + 5.5)} ${y}L${x} ${px(cy + 5.5)}L${px(cx - 5.5)} ${y}Z" fill="#ffffff" stroke="${color}" stroke-width="2"/>`;
    case 'none':
      return '';
  }
}

const DASH: Readonly<Record<LineStyle, string>> = { solid: '', dotted: ' stroke-dasharray="2 3"', bound: ' stroke-dasharray="7 4"', marks: '' };

function lineBody(line: ChartLine, x: AxisScale, y: AxisScale, logY: boolean): string[] {
  const pts = line.points.filter((p) => p.x > 0 && (!logY || p.y > 0)).slice().sort((a, b) => a.x - b.x);
  const out: string[] = [];
  const color = escapeXml(line.color);
  if (line.style === 'bound') {
    for (const p of pts) {
      const x1 = px(x.at(p.x / 10 ** BOUND_HALF_DECADES));
      const x2 = px(x.at(p.x * 10 ** BOUND_HALF_DECADES));
      out.push(`<line x1="${x1}" y1="${px(y.at(p.y))}" x2="${x2}" y2="${px(y.at(p.y))}" stroke="${color}" stroke-width="2"${DASH.bound}><title>${escapeXml(p.title)}</title></line>`);
    }
    return out;
  }
  if (line.style !== 'marks' && pts.length > 1) {
    const d = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${px(x.at(p.x))} ${px(y.at(p.y))}`).join('');
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="${line.style === 'solid' ? 2 : 1.6}"${DASH[line.style]}/>`);
  }
  for (const p of pts) {
    const cx = x.at(p.x);
    const cy = y.at(p.y);
    out.push(`<g class="point" data-x="${formatNumber(p.x)}" data-y="${escapeXml(String(p.y))}"><title>${escapeXml(p.title)}</title>${marker(line.marker, cx, cy, color)}</g>`);
    if (p.note) out.push(`<text x="${px(cx + 7)}" y="${px(cy - 6)}" font-size="10" fill="${color}">${escapeXml(p.note)}</text>`);
  }
  return out;
}

function legend(lines: readonly ChartLine[], top: number): string[] {
  const out: string[] = [];
  lines.forEach((line, i) => {
    const y = top + i * LEGEND_ROW;
    const color = escapeXml(line.color);
    const sample =
      line.style === 'marks'
        ? ''
        : `<line x1="${PLOT.left}" y1="${y}" x2="${PLOT.left + 28}" y2="${y}" stroke="${color}" stroke-width="2"${DASH[line.style]}/>`;
    out.push(`${sample}${marker(line.marker, PLOT.left + 14, y, color)}`);
    out.push(`<text x="${PLOT.left + 38}" y="${y}" dy="4" font-size="12" fill="#222222">${escapeXml(truncate(line.label, LABEL_MAX))}</text>`);
  });
  return out;
}

/** The whole SVG document. A chart without a drawable point says so instead of drawing empty axes. */
export function renderChart(spec: ChartSpec): string {
  const s = scales(spec);
  const legendTop = PLOT.bottom + 58;
  const footerTop = legendTop + spec.lines.length * LEGEND_ROW + 8;
  const height = footerTop + spec.footer.length * FOOTER_ROW + 10;
  const body: string[] = [];
  body.push(`<text x="${PLOT.left}" y="26" font-size="16" font-weight="bold" fill="#111111">${escapeXml(spec.title)}</text>`);
  if (s === null) {
    body.push(`<text x="${px((PLOT.left + PLOT.right) / 2)}" y="${px((PLOT.top + PLOT.bottom) / 2)}" text-anchor="middle" font-size="14" fill="#666666">no measurements recorded yet</text>`);
  } else {
    body.push(...axes(spec, s.x, s.y));
    for (const line of spec.lines) body.push(...lineBody(line, s.x, s.y, spec.y === 'log'));
  }
  body.push(...legend(spec.lines, legendTop));
  spec.footer.forEach((f, i) => body.push(`<text x="${PLOT.left}" y="${footerTop + i * FOOTER_ROW}" dy="4" font-size="10" fill="#555555">${escapeXml(f)}</text>`));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ${FONT}>`,
    `<title>${escapeXml(spec.title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
