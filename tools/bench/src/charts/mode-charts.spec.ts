import { modeCharts } from './mode-charts.js';
import { allElements, parseXml } from './testing/xml-tree.js';
import { SAMPLE_NFTABLES, SAMPLE_USERSPACE } from './testing/sample-perf-data.js';

describe('modeCharts', () => {
  it('makes a time and a memory chart per mode that has series of that kind, in mode order', () => {
    const charts = modeCharts([SAMPLE_NFTABLES, SAMPLE_USERSPACE]);
    expect(charts.map((c) => c.name)).toEqual(['nftables-time.svg', 'nftables-memory.svg', 'userspace-memory.svg']);
    for (const c of charts) expect(parseXml(c.svg).name).toBe('svg');
    expect(modeCharts([])).toEqual([]);
  });

  it('draws milliseconds in seconds, the kernel floor dotted, upstream as marks and notes other endpoint counts', () => {
    const time = parseXml(modeCharts([SAMPLE_NFTABLES])[0]!.svg);
    const points = allElements(time).filter((e) => e.name === 'g' && e.attrs['class'] === 'point');
    const compute = points.find((p) => p.children.some((c) => c.name === 'title' && c.text.startsWith('one-endpoint change')))!;
    expect(compute.attrs['data-y']).toBe('0.012');
    expect(compute.children[0]!.text).toMatch(/= 12 ms$/);
    expect(allElements(time).some((e) => e.name === 'path' && e.attrs['stroke-dasharray'] === '2 3')).toBe(false); // one kernel point: no line
    const upstream = points.find((p) => p.attrs['data-x'] === '44,000')!;
    expect(upstream.children.some((c) => c.name === 'path')).toBe(true); // the diamond
    const notes = allElements(time).filter((e) => e.name === 'text' && e.text === '×1');
    expect(notes).toHaveLength(2); // 45k × 1 ours, 44k × 1 upstream
    const footer = allElements(time).filter((e) => e.name === 'text' && e.text.startsWith('nftables-scale: '));
    expect(footer).toHaveLength(1);
    expect(allElements(time).some((e) => e.name === 'text' && e.text.includes('1-minute load 0.8 → 1.9'))).toBe(true);
  });

  it('is deterministic: same data, same bytes', () => {
    const a = modeCharts([SAMPLE_NFTABLES, SAMPLE_USERSPACE]);
    const b = modeCharts(JSON.parse(JSON.stringify([SAMPLE_NFTABLES, SAMPLE_USERSPACE])));
    expect(b).toEqual(a);
  });
});
