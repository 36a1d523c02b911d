import { ElementClaims } from './element-claims.js';
import type { PlacedElement } from '../render/service-port-render.js';

const el = (value: string): PlacedElement => ({ container: 'service-ips', key: '10.0.0.1 . tcp . 80', value });

describe('ElementClaims', () => {
  it('keeps the first claim first, whoever else claims the element', () => {
    const c = new ElementClaims();
    c.add('k', 'a', el('goto A'));
    c.add('k', 'b', el('goto B'));
    c.add('k', 'a', el('goto A2')); // a repeated claim keeps its place and its first element
    expect(c.first('k')).toEqual({ owner: 'a', element: el('goto A') });
    expect(c.size).toBe(1);
  });

  it('hands the element to the next owner in claim order when the first lets go', () => {
    const c = new ElementClaims();
    c.add('k', 'a', el('goto A'));
    c.add('k', 'b', el('goto B'));
    c.add('k', 'c', el('goto C'));
    c.remove('k', 'a');
    expect(c.first('k')?.owner).toBe('b');
    c.remove('k', 'b');
    expect(c.first('k')).toEqual({ owner: 'c', element: el('goto C') });
    c.add('k', 'd', el('goto D'));
    expect(c.first('k')?.owner).toBe('c');
  });

  it('forgets an element nobody claims, and ignores releases by non-owners', () => {
    const c = new ElementClaims();
    c.add('k', 'a', el('goto A'));
    c.remove('k', 'z');
    expect(c.has('k')).toBe(true);
    c.remove('k', 'a');
    expect(c.has('k')).toBe(false);
    expect(c.first('k')).toBeUndefined();
    c.remove('missing', 'a');
    expect(c.size).toBe(0);
  });
});
