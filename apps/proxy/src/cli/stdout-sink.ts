import type { TextSink } from '@kube-proxy/core';

/**
 * The --dry-run sink over the CLI's stdout. `drained` waits while the stream holds more than its
 * high-water mark (a pipe to a slower reader), so a 16 MB block is written 256 kB at a time instead
 * of being queued in memory whole; it also gives up waiting when the stream closes or fails (a reader
 * that went away must not hang the sync).
 */
export function stdoutSink(stream: NodeJS.WritableStream): TextSink {
  const writable = stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
  return {
    write: (text) => void stream.write(text),
    drained: () =>
      writable.writableNeedDrain !== true
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const done = () => {
              stream.off('drain', done);
              stream.off('close', done);
              stream.off('error', done);
              resolve();
            };
            stream.on('drain', done);
            stream.on('close', done);
            stream.on('error', done);
          }),
  };
}
