#!/usr/bin/env node
// Runs a command in its own process group and ends that whole group when this watchdog's stdin
// closes (its parent, e.g. a test runner, went away - even if it was SIGKILLed), on SIGTERM/SIGINT,
// or after a maximum lifetime. Plain Node, no build:
//
//   node watchdog.mjs <max-lifetime-s> <command> [args...]
//
// stdout/stderr of the command are passed through; the exit code is the command's (128+n if it died
// of signal n). Used by the netns harness so a proxy started inside a namespace can never outlive the
// test run that started it.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

const [maxLifetime, command, ...args] = process.argv.slice(2);
const lifetimeS = Number(maxLifetime);
if (!command || !(lifetimeS > 0)) {
  process.stderr.write('usage: watchdog.mjs <max-lifetime-s> <command> [args...]\n');
  process.exit(2);
}

const child = spawn(command, args, { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
let ending = false;

function signalGroup(sig) {
  try {
    process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      /* gone */
    }
  }
}

function end(why, sig = 'SIGTERM') {
  if (ending) return;
  ending = true;
  if (why) process.stderr.write(`watchdog: ${why}; sending ${sig} to ${command} (pgid ${child.pid})\n`);
  signalGroup(sig);
  setTimeout(() => signalGroup('SIGKILL'), 5000).unref();
}

child.on('error', (e) => {
  process.stderr.write(`watchdog: cannot run ${command}: ${e.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  // Make sure nothing of the group survives its leader.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already empty */
  }
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});

setTimeout(() => end(`max lifetime ${lifetimeS}s reached`), lifetimeS * 1000).unref();
process.stdin.on('end', () => end('stdin closed (parent gone)'));
process.stdin.on('close', () => end('stdin closed (parent gone)'));
process.stdin.on('error', () => end('stdin error (parent gone)'));
process.stdin.resume();
process.on('SIGTERM', () => end('', 'SIGTERM'));
process.on('SIGINT', () => end('', 'SIGINT'));
