#!/usr/bin/env node
// Hosts a TestApiServer (the BUILT one, this library's dist/) in whatever network namespace this
// runs in, so a proxy inside a simulated node's namespace can reach it on 127.0.0.1:
//
//   ip netns exec <node-ns> node libs/testing/test-apiserver/src/test-apiserver-host.mjs [max-lifetime-s]
//
// Protocol (newline-delimited JSON):
//   stdout, first line:  {"url":"http://127.0.0.1:<port>"}
//   stdin, one per line: {"id":1,"op":"create"|"update"|"upsert"|"delete","object":{...}}
//                        {"id":2,"op":"dropAllWatches","graceful":false}
//                        {"id":3,"op":"activeWatches"}
//                        {"id":4,"op":"stopListening"|"startListening"|"compact"|"clearFaults"}
//                        {"id":5,"op":"stallWatches","on":true} {"id":6,"op":"stallOpenWatches"}
//                        {"id":6,"op":"refuseConnections","ms":1000}
//                        {"id":7,"op":"requests","since":<epoch ms>}   (method, path, query, contentType, at)
//                        {"id":8,"op":"batch","ops":[{...}, ...]}     (in order, nothing in between)
//                        {"id":9,"op":"events"}                      (every Event posted, oldest first)
//                        {"id":10,"op":"get","object":{"kind":"Node","metadata":{"name":"n"}}}  (result.object, or null)
//   stdout, one per command: {"id":1,"ok":true,"result":{...}} or {"id":1,"ok":false,"error":"..."}
// Every ack carries `activeWatches` and `resourceVersion` (the server's state right after the command).
//
// Bounded: exits when stdin closes (the parent went away, even SIGKILLed), on SIGTERM/SIGINT, or after
// the max lifetime (default 300 s). Plain Node, no build of its own (run `npx nx build testing-apiserver` first).
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const lifetimeS = Number(process.argv[2] ?? 300);
if (!(lifetimeS > 0)) {
  process.stderr.write('usage: test-apiserver-host.mjs [max-lifetime-s]\n');
  process.exit(2);
}

const built = fileURLToPath(new URL('../dist/index.js', import.meta.url));
if (!existsSync(built)) {
  process.stderr.write(`test-apiserver-host: ${built} does not exist; run \`npx nx build testing-apiserver\` first\n`);
  process.exit(3);
}
const { TestApiServer } = await import(pathToFileURL(built).href);

const server = await TestApiServer.start();
let closing = false;

function send(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function shutdown(why, code = 0) {
  if (closing) return;
  closing = true;
  if (why) process.stderr.write(`test-apiserver-host: ${why}; closing\n`);
  // close() must not hang the exit: bound it.
  await Promise.race([server.close().catch(() => undefined), new Promise((r) => setTimeout(r, 2000).unref())]);
  process.exit(code);
}

setTimeout(() => void shutdown(`max lifetime ${lifetimeS}s reached`, 0), lifetimeS * 1000).unref();
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
process.stdout.on('error', () => void shutdown('stdout closed', 0));

function summary(o) {
  if (!o || typeof o !== 'object') return o;
  return { kind: o.kind, name: o.metadata?.name, namespace: o.metadata?.namespace, resourceVersion: o.metadata?.resourceVersion };
}

async function handle(cmd) {
  switch (cmd.op) {
    case 'create':
      return summary(server.create(cmd.object));
    case 'update':
      return summary(server.update(cmd.object));
    case 'upsert':
      return summary(server.upsert(cmd.object));
    case 'delete':
      return summary(server.delete(cmd.object));
    case 'dropAllWatches':
      return { dropped: server.dropAllWatches({ graceful: cmd.graceful === true }) };
    case 'activeWatches':
      return { activeWatches: server.activeWatches() };
    case 'watchRequests':
      return { count: server.requestsWhere((r) => r.query.watch === 'true' || r.query.watch === '1').length };
    case 'stopListening':
      await server.stopListening();
      return { listening: server.listening };
    case 'startListening':
      await server.startListening();
      return { listening: server.listening, url: server.url };
    case 'compact':
      server.compact();
      return { compactedAt: server.resourceVersion() };
    case 'stallWatches':
      server.stallWatches(cmd.on !== false);
      return {};
    case 'stallOpenWatches':
      return { stalled: server.stallOpenWatches() };
    case 'refuseConnections':
      server.refuseConnections(Number(cmd.ms));
      return {};
    case 'clearFaults':
      server.clearFaults();
      return {};
    case 'requests':
      return { requests: server.requestsWhere((r) => r.at >= Number(cmd.since ?? 0)) };
    case 'events':
      return { events: server.events() };
    case 'get':
      return { object: server.get(cmd.object) ?? null };
    case 'batch': {
      const results = [];
      for (const op of cmd.ops ?? []) results.push(await handle(op));
      return { results };
    }
    default:
      throw new Error(`unknown op ${JSON.stringify(cmd.op)}`);
  }
}

let queue = Promise.resolve();
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (e) {
    send({ ok: false, error: `bad JSON: ${e.message}` });
    return;
  }
  // One command at a time, in arrival order (some are asynchronous: stop/start listening).
  queue = queue.then(async () => {
    try {
      const result = await handle(cmd);
      send({ id: cmd.id, op: cmd.op, ok: true, result, activeWatches: server.activeWatches(), resourceVersion: server.resourceVersion() });
    } catch (e) {
      send({ id: cmd.id, op: cmd.op, ok: false, error: e?.message ?? String(e) });
    }
  });
});
rl.on('close', () => void shutdown('', 0));

send({ url: server.url, pid: process.pid });
