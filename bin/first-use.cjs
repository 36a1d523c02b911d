// What bin/kube-proxy does before the app can run on a fresh clone: install the npm dependencies
// (npm ci) when there are none, then build the app (nx build proxy) when there is no build, telling
// the user on stderr. stdout stays clean: it carries only --dry-run output. Plain CommonJS with its
// effects injected, so first-use.spec.ts beside it can check the decisions.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

/**
 * Makes sure `root` has its dependencies and a build of the app; returns the exit status to end
 * with (0 = ready to run). `io` defaults to the real filesystem, child processes and stderr.
 */
function prepare(root, io = {}) {
  const exists = io.exists ?? existsSync;
  const run = io.run ?? ((command, args) => spawnSync(command, args, { cwd: root, stdio: ['ignore', 2, 2], env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' } }).status);
  const say = io.say ?? ((text) => process.stderr.write(`kube-proxy: ${text}\n`));
  const main = join(root, 'apps', 'proxy', 'dist', 'main.js');
  const nx = join(root, 'node_modules', '.bin', 'nx');
  if (exists(main)) return 0;
  if (!exists(nx)) {
    say(`first run on this checkout: installing the npm dependencies (npm ci in ${root}, about a minute) ...`);
    if (run('npm', ['ci', '--no-audit', '--no-fund']) !== 0 || !exists(nx)) {
      say('npm ci failed; run `npm ci` in the repository to see why');
      return 1;
    }
  }
  say('no build found at apps/proxy/dist; building it now (npx nx build proxy, about 30 s) ...');
  if (run(nx, ['build', 'proxy', '--outputStyle=static']) !== 0 || !exists(main)) {
    say('build failed; run `npx nx build proxy` to see why');
    return 1;
  }
  return 0;
}

module.exports = { prepare };
