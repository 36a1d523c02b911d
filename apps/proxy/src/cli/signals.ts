/** Resolves with the signal name on the first SIGTERM or SIGINT; later ones are left to Node's default. */
export function onceTerminated(): { promise: Promise<NodeJS.Signals>; dispose: () => void } {
  let resolve!: (s: NodeJS.Signals) => void;
  const promise = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const handler = (signal: NodeJS.Signals) => {
    dispose();
    resolve(signal);
  };
  const dispose = () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
  return { promise, dispose };
}
