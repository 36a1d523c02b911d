import { FakeClock } from '@kube-proxy/core/testing';
import { EndpointPicker, type ProxyTarget } from './endpoint-picker.js';

const ep = (n: number): ProxyTarget => ({ ip: `10.0.0.${n}`, port: 80, key: `10.0.0.${n}:80` });
const A = ep(1);
const B = ep(2);
const C = ep(3);

function picks(picker: EndpointPicker, client: string, count: number): string[] {
  return Array.from({ length: count }, () => picker.next(client)?.key ?? 'none');
}

describe('EndpointPicker', () => {
  it('has nothing to offer without endpoints', () => {
    const picker = new EndpointPicker(new FakeClock());
    expect(picker.next('1.1.1.1')).toBeUndefined();
  });

  it('rotates over the endpoints in order, whoever asks', () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([A, B, C], 0);
    expect([...picks(picker, 'c1', 2), ...picks(picker, 'c2', 4)]).toEqual([A.key, B.key, C.key, A.key, B.key, C.key]);
  });

  it('keeps its position when an update repeats the same list, restarts inside a shorter one', () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([A, B, C], 0);
    picker.next('c');
    picker.next('c');
    picker.update([A, B, C], 0);
    expect(picker.next('c')).toBe(C);
    picker.next('c');
    picker.next('c');
    picker.update([B], 0);
    expect(picks(picker, 'c', 2)).toEqual([B.key, B.key]);
  });

  it('ClientIP affinity: a client sticks to its endpoint until the timeout passes without use', () => {
    const clock = new FakeClock();
    const picker = new EndpointPicker(clock);
    picker.update([A, B, C], 10);
    expect(picks(picker, 'c1', 3)).toEqual([A.key, A.key, A.key]);
    expect(picker.next('c2')).toBe(B);
    clock.advance(9_999);
    expect(picker.next('c1')).toBe(A); // used again: the timeout restarts
    clock.advance(9_999);
    expect(picker.next('c1')).toBe(A);
    clock.advance(10_000);
    expect(picker.next('c1')).toBe(C); // expired: next in rotation, and sticky again
    expect(picker.next('c1')).toBe(C);
  });

  it('a retry after a failed connect moves the client on, and it sticks to the new endpoint', () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([A, B, C], 60);
    expect(picker.next('c1')).toBe(A);
    expect(picker.next('c1', true)).toBe(B);
    expect(picker.next('c1')).toBe(B);
  });

  it('forgets affinity to removed endpoints, and all of it when affinity is turned off', () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([A, B], 60);
    expect(picker.next('c1')).toBe(A);
    expect(picker.next('c2')).toBe(B);
    picker.update([B, C], 60);
    expect(picker.affinityEntries).toBe(1);
    expect(picker.next('c2')).toBe(B);
    picker.update([B, C], 0);
    expect(picker.affinityEntries).toBe(0);
  });

  it('sweep() drops expired entries so the map stays bounded by live clients', () => {
    const clock = new FakeClock();
    const picker = new EndpointPicker(clock);
    picker.update([A], 1);
    for (let i = 0; i < 100; i++) picker.next(`10.1.0.${i}`);
    expect(picker.affinityEntries).toBe(100);
    clock.advance(500);
    picker.next('10.1.0.7');
    clock.advance(600);
    picker.sweep();
    expect(picker.affinityEntries).toBe(1);
  });
});

describe('EndpointPicker avoid-list (failover)', () => {
  it('skips endpoints this connection already failed on, even when other clients moved the rotation', () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([A, B, C], 0);
    expect(picker.next('c1')).toBe(A); // c1 fails on A
    expect(picker.next('c2')).toBe(B); // another client takes B meanwhile
    expect(picker.next('c3')).toBe(C);
    // c1's retry: the rotation points at A again, which c1 must not retry.
    expect(picker.next('c1', true, new Set([A.key]))).toBe(B);
    expect(picker.next('c1', true, new Set([A.key, B.key]))).toBe(C);
    // Everything failed: the rotation goes on (the same endpoint may come back with a longer timeout).
    expect(picker.next('c1', true, new Set([A.key, B.key, C.key]))).toBe(A);
  });
});
