import { Writable } from 'node:stream';
import { writeDryRunBlock } from '@kube-proxy/core';
import { stdoutSink } from './stdout-sink.js';

/** A stream that takes one chunk per `release()`, like a pipe whose reader is slow. */
function slowStream() {
  const received: string[] = [];
  const pending: Array<() => void> = [];
  const stream = new Writable({
    highWaterMark: 4,
    write(chunk: Buffer, _enc, callback) {
      received.push(chunk.toString());
      pending.push(callback);
    },
  });
  return { stream, received, release: () => pending.shift()?.() };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('stdoutSink', () => {
  it('waits for the stream to drain between the pieces of a block', async () => {
    const s = slowStream();
    let done = false;
    const block = writeDryRunBlock(stdoutSink(s.stream), ['aaaa', 'bbbb', 'cccc']).then(() => (done = true));
    await tick();
    // The first piece filled the stream: the second has not been produced yet.
    expect(s.received).toEqual(['aaaa']);
    for (let i = 0; i < 10 && !done; i++) {
      s.release();
      await tick();
    }
    await block;
    expect(s.received).toEqual(['aaaa', 'bbbb', 'cccc']);
  });

  it('writes blocks one after another, never interleaved', async () => {
    const s = slowStream();
    const sink = stdoutSink(s.stream);
    const a = writeDryRunBlock(sink, ['a1xx', 'a2xx']);
    const b = writeDryRunBlock(sink, ['b1xx', 'b2xx']);
    for (let i = 0; i < 20; i++) {
      s.release();
      await tick();
    }
    await Promise.all([a, b]);
    expect(s.received).toEqual(['a1xx', 'a2xx', 'b1xx', 'b2xx']);
  });

  it('stops waiting when the stream closes under it', async () => {
    const s = slowStream();
    const block = writeDryRunBlock(stdoutSink(s.stream), ['aaaa', 'bbbb']);
    await tick();
    s.stream.destroy();
    await block;
    expect(s.received).toEqual(['aaaa']);
  });
});
