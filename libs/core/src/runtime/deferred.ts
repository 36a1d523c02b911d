/**
 * A promise with its settle functions (a proxier's "first sync done"): `settled` tells whether it
 * was resolved or rejected; a rejection nobody awaits is not an unhandled rejection.
 */
export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
  settled: boolean;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be waiting; a rejection on stop() must not become an unhandled rejection.
  promise.catch(() => undefined);
  const d: Deferred = {
    promise,
    settled: false,
    resolve: () => {
      d.settled = true;
      resolve();
    },
    reject: (err) => {
      d.settled = true;
      reject(err);
    },
  };
  return d;
}

