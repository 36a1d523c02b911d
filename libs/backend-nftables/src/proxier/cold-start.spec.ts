import { anonymousSetsOf, coldStartSlices } from './cold-start.js';
import type { ServicePortRender } from '../render/service-port-render.js';

const render = (...rules: string[]): ServicePortRender => ({ chains: [{ name: 'service-x', rules }], affinitySets: [], elements: [], noLocalInternal: false, noLocalExternal: false });
const withMap = render('meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80 , 1 : 10.0.0.2 . 80 }');
const plain = render('meta l4proto tcp dnat to 10.0.0.1:80');
const change = (key: string, r: ServicePortRender | undefined) => ({ key, render: r });
const sizes = (slices: ReadonlyArray<readonly unknown[]>) => slices.map((s) => s.length);

describe('cold-start slices', () => {
  it('counts the anonymous sets a render binds: a map or set literal is one, a plain dnat none', () => {
    expect(anonymousSetsOf(withMap)).toBe(1);
    expect(anonymousSetsOf(plain)).toBe(0);
    expect(anonymousSetsOf(render('ip saddr != { 1.2.3.0/24 } drop', 'numgen random mod 2 vmap { 0 : goto a , 1 : goto b }'))).toBe(2);
    expect(anonymousSetsOf(undefined)).toBe(0);
  });

  it('closes a slice at `batch` anonymous sets: services with maps go as many per transaction as before', () => {
    const changes = Array.from({ length: 25 }, (_, i) => change(`s${i}`, withMap));
    expect(sizes(coldStartSlices(changes, 10, 1000))).toEqual([10, 10, 5]);
  });

  it('puts services without anonymous sets together up to `maxServices`', () => {
    const changes = Array.from({ length: 25 }, (_, i) => change(`s${i}`, i % 5 === 0 ? withMap : plain));
    // 5 maps in all: the map budget (10) is never reached, the service cap (12) is.
    expect(sizes(coldStartSlices(changes, 10, 12))).toEqual([12, 12, 1]);
    expect(sizes(coldStartSlices(changes, 2, 1000))).toEqual([10, 10, 5]);
  });

  it('keeps every service once and in order, and gives an empty cold start one (empty) slice', () => {
    const changes = Array.from({ length: 7 }, (_, i) => change(`s${i}`, i % 2 === 0 ? withMap : undefined));
    const slices = coldStartSlices(changes, 2, 3);
    expect(slices.flat().map((c) => c.key)).toEqual(changes.map((c) => c.key));
    expect(slices.every((s) => s.length > 0)).toBe(true);
    expect(coldStartSlices([], 10, 10)).toEqual([[]]);
  });
});
