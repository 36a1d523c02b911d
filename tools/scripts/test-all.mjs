#!/usr/bin/env node
// `npm test` on any checkout, fresh or not: installs what the tests need, then runs every test
// (sync check, lint, typecheck, unit tests, the e2e suites). Plain Node, no dependencies: it runs
// before node_modules exists. .ci/run calls this same command. What it does is decided in
// test-plan.mjs:
// - no node_modules (a fresh clone): `npm ci` first, said on stderr;
// - root: the Debian kernel tools the real-kernel suites drive are installed with apt-get when one
//   is missing, as CI needs;
// - not root: everything that needs no root runs, the real-kernel suites skip themselves, and a
//   banner at the end names what was skipped and the one command that runs it all.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KERNEL_TOOLS, testPlan } from './test-plan.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const nx = join(root, 'node_modules', '.bin', 'nx');

function onPath(bin) {
  // Debian keeps most of these in sbin, which a non-login root shell may not have on PATH.
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'];
  return dirs.some((d) => d !== '' && existsSync(join(d, bin)));
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const { steps, banner } = testPlan({ hasNodeModules: existsSync(nx), isRoot, missingTools: isRoot ? KERNEL_TOOLS.filter((b) => !onPath(b)) : [], nx });
let status = 0;
for (const step of steps) {
  if (step.say) process.stderr.write(`npm test: ${step.say}\n`);
  const r = spawnSync(step.command, step.args, { cwd: root, stdio: 'inherit', env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false', ...(step.env ?? {}) } });
  if (r.error) process.stderr.write(`npm test: ${step.command} failed to start: ${r.error.message}\n`);
  status = r.status ?? 1;
  if (status !== 0) break;
}
if (banner) process.stderr.write(banner);
process.exitCode = status;
