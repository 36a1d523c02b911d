#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=4 --expose-gc
// The image's /usr/local/bin/kube-proxy (ENTRYPOINT). It is bin/kube-proxy without the first-use
// step (installing and building a fresh clone): the image ships the build, and a container must not
// reach for npm. The interpreter line is bin/kube-proxy's, whose comment gives the measurements
// behind the memory settings; deploy/image/src/image-definition.spec.ts keeps the two lines equal.
'use strict';
const { pathToFileURL } = require('node:url');

const main = '/opt/kube-proxy-ts/apps/proxy/dist/main.js';
import(pathToFileURL(main).href).catch((err) => {
  process.stderr.write('kube-proxy: ' + (err && err.stack ? err.stack : String(err)) + '\n');
  process.exit(1);
});
