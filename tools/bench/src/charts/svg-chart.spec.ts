import { renderChart, type ChartSpec } from './svg-chart.js';
import { formatSeconds } from './svg-text.js';
import { allElements, parseXml, type XmlElement } from './testing/xml-tree.js';

const base: ChartSpec = {
  title: 'test chart',
  xLabel: 'Services',
  yLabel: 'RSS (MB)',
  y: 'linear',
  formatY: (v) => `${v} MB`,
  xSpan: [1000, 45_000],
  lines: [
    {
      label: 'ours',
      color: '#0072b2',
      style: 'solid',
      marker: 'circle',
      points: [
        { x: 1000, y: 100, title: '1k' },
        { x: 10_000, y: 200, title: '10k' },
      ],
    },
    { label: 'bound', color: '#0072b2', style: 'bound', marker: 'none', points: [{ x: 10_000, y: 200, title: 'bound' }] },
  ],
  footer: ['data: test'],
};

function texts(svg: XmlElement, content: string): XmlElement[] {
  return allElements(svg).filter((e) => e.name === 'text' && e.text === content);
}

function circleAt(svg: XmlElement, x: string): XmlElement {
  const g = allElements(svg).find((e) => e.name === 'g' && e.attrs['data-x'] === x);
  return g!.children.find((c) => c.name === 'circle')!;
}

describe('renderChart', () => {
  it('is well-formed SVG and puts each point on its x and y ticks', () => {
    const svg = parseXml(renderChart(base));
    expect(svg.name).toBe('svg');
    const tenK = circleAt(svg, '10,000');
    const oneK = circleAt(svg, '1,000');
    // The tick labelled 10k sits under the 10k point; the grid line labelled 200 MB is at its height.
    expect(texts(svg, '10k')[0]!.attrs['x']).toBe(tenK.attrs['cx']);
    expect(texts(svg, '1k')[0]!.attrs['x']).toBe(oneK.attrs['cx']);
    expect(texts(svg, '200 MB')[0]!.attrs['y']).toBe(tenK.attrs['cy']);
    expect(texts(svg, '100 MB')[0]!.attrs['y']).toBe(oneK.attrs['cy']);
    // Log x: 1k → 10k is one decade of the 800 … 54,000 domain across the 662 px plot.
    const plot = allElements(svg).find((e) => e.name === 'rect' && e.attrs['stroke'] === '#888888')!;
    const width = Number(plot.attrs['width']);
    const decade = (Number(tenK.attrs['cx']) - Number(oneK.attrs['cx'])) / width;
    expect(decade).toBeCloseTo(1 / Math.log10(54_000 / 800), 3);
  });

  it('draws a bound as a dashed segment centred on its size, at its value', () => {
    const svg = parseXml(renderChart(base));
    const bound = allElements(svg).find((e) => e.name === 'line' && e.attrs['stroke-dasharray'] === '7 4' && e.children.length > 0)!;
    const point = circleAt(svg, '10,000');
    expect(bound.attrs['y1']).toBe(point.attrs['cy']);
    const mid = (Number(bound.attrs['x1']) + Number(bound.attrs['x2'])) / 2;
    // Symmetric in log x, so its middle is the point's x (to rounding).
    expect(Math.abs(mid - Number(point.attrs['cx']))).toBeLessThan(0.02);
  });

  it('escapes labels, titles and notes from the data', () => {
    const hostile: ChartSpec = {
      ...base,
      title: 'a <script>alert("x")</script> & co',
      lines: [{ ...base.lines[0]!, label: `<&>"'\u0001`, points: [{ x: 5000, y: 1, note: '<n>', title: '</title>' }] }],
    };
    const src = renderChart(hostile);
    expect(src).not.toContain('<script>');
    const svg = parseXml(src);
    expect(texts(svg, 'a <script>alert("x")</script> & co')).toHaveLength(1);
    expect(texts(svg, `<&>"'\ufffd`)).toHaveLength(1);
    expect(texts(svg, '<n>')).toHaveLength(1);
  });

  it('says so when there is nothing to draw, and skips what a log axis cannot show', () => {
    const empty = parseXml(renderChart({ ...base, lines: [] }));
    expect(texts(empty, 'no measurements recorded yet')).toHaveLength(1);
    const logOnlyZero = parseXml(renderChart({ ...base, y: 'log', formatY: formatSeconds, lines: [{ ...base.lines[0]!, points: [{ x: 1000, y: 0, title: 'zero' }] }] }));
    expect(texts(logOnlyZero, 'no measurements recorded yet')).toHaveLength(1);
    const mixed = parseXml(
      renderChart({ ...base, y: 'log', formatY: formatSeconds, lines: [{ ...base.lines[0]!, points: [{ x: 1000, y: 0, title: 'zero' }, { x: 2000, y: 2, title: 'two' }] }] }),
    );
    expect(allElements(mixed).filter((e) => e.name === 'g' && e.attrs['class'] === 'point')).toHaveLength(1);
  });

  it('gives the same bytes for the same data', () => {
    const copy: ChartSpec = { ...base, lines: base.lines.map((l) => ({ ...l, points: l.points.map((p) => ({ ...p })) })) };
    expect(renderChart(copy)).toBe(renderChart(base));
  });
});
