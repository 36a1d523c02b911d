import { Writable } from 'node:stream';
import { FakeClock } from '../testing/fake-clock.js';
import { createLogger, levelForVerbosity } from './winston-logger.js';

function sink(): { stream: Writable; lines: () => Promise<string[]> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return {
    stream,
    // winston hands lines to the transport asynchronously.
    lines: async () => {
      await new Promise((r) => setImmediate(r));
      return chunks.join('').split('\n').filter((l) => l !== '');
    },
  };
}

// A local-time instant, since klog prints local time: 29 Nov 2024 12:00:00.123.
const clock = new FakeClock(new Date(2024, 10, 29, 12, 0, 0, 123).getTime());

describe('createLogger', () => {
  it('maps verbosity to levels', () => {
    expect([0, 1, 2, 3, 4, 9].map(levelForVerbosity)).toEqual(['info', 'info', 'verbose', 'verbose', 'debug', 'debug']);
  });

  it('writes klog-like text with structured fields', async () => {
    const out = sink();
    const log = createLogger({ verbosity: 0, format: 'text', stream: out.stream, clock });
    log.info('Using iptables Proxier', { ipFamily: 'IPv4', count: 3, ok: true, err: new Error('x'), none: null, obj: { a: 1 } });
    log.warn('careful');
    log.error('broken', { path: '/etc/"q"' });
    expect(await out.lines()).toEqual([
      'I1129 12:00:00.123000 Using iptables Proxier ipFamily="IPv4" count=3 ok=true err="x" none=<nil> obj={"a":1}',
      'W1129 12:00:00.123000 careful',
      'E1129 12:00:00.123000 broken path="/etc/\\"q\\""',
    ]);
  });

  it('filters by verbosity', async () => {
    const quiet = sink();
    const q = createLogger({ verbosity: 0, format: 'text', stream: quiet.stream, clock });
    q.verbose('v2');
    q.debug('v4');
    q.info('v0');
    expect((await quiet.lines()).map((l) => l.split(' ').pop())).toEqual(['v0']);

    const loud = sink();
    const l = createLogger({ verbosity: 4, format: 'text', stream: loud.stream, clock });
    l.verbose('v2');
    l.debug('v4');
    expect(await loud.lines()).toHaveLength(2);

    const mid = sink();
    const m = createLogger({ verbosity: 2, format: 'text', stream: mid.stream, clock });
    m.verbose('v2');
    m.debug('v4');
    expect(await mid.lines()).toEqual(['I1129 12:00:00.123000 v2']);
  });

  it('writes JSON lines with ts, level and msg', async () => {
    const out = sink();
    const log = createLogger({ verbosity: 0, format: 'json', stream: out.stream, clock });
    log.child({ component: 'proxier' }).info('synced', { rules: 12 });
    const [line] = await out.lines();
    expect(JSON.parse(line)).toEqual({ ts: clock.now() / 1000, level: 'info', msg: 'synced', component: 'proxier', rules: 12 });
    expect(Object.keys(JSON.parse(line)).slice(0, 3)).toEqual(['ts', 'level', 'msg']);
  });

  it('children add their fields to every line', async () => {
    const out = sink();
    const log = createLogger({ verbosity: 0, format: 'text', stream: out.stream, clock }).child({ ipFamily: 'IPv6' });
    log.child({ table: 'nat' }).info('restore');
    expect(await out.lines()).toEqual(['I1129 12:00:00.123000 restore ipFamily="IPv6" table="nat"']);
  });
});
