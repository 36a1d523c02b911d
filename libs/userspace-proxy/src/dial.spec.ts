import { FakeClock } from '@kube-proxy/core/testing';
import { nullLogger } from '@kube-proxy/core';
import { dialWithFailover, ENDPOINT_DIAL_TIMEOUTS_MS, type EndpointSocket } from './dial.js';
import { EndpointPicker, type ProxyTarget } from './endpoint-picker.js';

const ep = (n: number): ProxyTarget => ({ ip: `10.0.0.${n}`, port: 80, key: `10.0.0.${n}:80` });
const fakeSocket = (target: ProxyTarget) => ({ target, destroy: () => undefined }) as unknown as EndpointSocket;

describe('dialWithFailover', () => {
  function run(picker: EndpointPicker, dead: ReadonlySet<string>, cancelled = () => false) {
    const attempts: string[] = [];
    let failures = 0;
    const outcome = dialWithFailover(
      picker,
      '192.168.0.9',
      nullLogger,
      () => failures++,
      cancelled,
      async (target, timeoutMs) => {
        attempts.push(`${target.key}@${timeoutMs}`);
        if (dead.has(target.key)) throw new Error('ECONNREFUSED');
        return fakeSocket(target);
      },
    );
    return { outcome, attempts, failures: () => failures };
  }

  it('upstream timeouts: 250 ms, 500 ms, 1 s, 2 s', () => {
    expect(ENDPOINT_DIAL_TIMEOUTS_MS).toEqual([250, 500, 1000, 2000]);
  });

  it('moves to an endpoint not tried yet, with a growing timeout, and counts each failure', async () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([ep(1), ep(2), ep(3)], 0);
    const r = run(picker, new Set([ep(1).key, ep(2).key]));
    expect((await r.outcome)?.target).toEqual(ep(3));
    expect(r.attempts).toEqual(['10.0.0.1:80@250', '10.0.0.2:80@500', '10.0.0.3:80@1000']);
    expect(r.failures()).toBe(2);
  });

  it('gives up after four tries, retrying a single endpoint with longer timeouts', async () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([ep(1)], 0);
    const r = run(picker, new Set([ep(1).key]));
    expect(await r.outcome).toBeUndefined();
    expect(r.attempts).toEqual(['10.0.0.1:80@250', '10.0.0.1:80@500', '10.0.0.1:80@1000', '10.0.0.1:80@2000']);
    expect(r.failures()).toBe(4);
  });

  it('stops when the client is gone, and when there is no endpoint', async () => {
    const picker = new EndpointPicker(new FakeClock());
    picker.update([ep(1), ep(2)], 0);
    const gone = run(picker, new Set([ep(1).key]), () => true);
    expect(await gone.outcome).toBeUndefined();
    expect(gone.attempts).toHaveLength(1);
    picker.update([], 0);
    const none = run(picker, new Set());
    expect(await none.outcome).toBeUndefined();
    expect(none.attempts).toEqual([]);
  });
});
