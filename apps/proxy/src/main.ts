// reflect-metadata must load before tsyringe is imported anywhere.
import 'reflect-metadata';
import { runCli } from './cli/run.js';
import { installTerminationHandlers } from './cli/signals.js';

// Before anything else: SIGTERM/SIGINT end the proxy with 0 from the start (see cli/signals.ts).
installTerminationHandlers();

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Timers and watchers are unref'd or closed; a leftover handle must not keep a finished run alive.
    setTimeout(() => process.exit(code), 1000).unref();
  },
  (err: unknown) => {
    process.stderr.write(`kube-proxy: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
