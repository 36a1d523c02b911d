#!/usr/bin/env node
// STAND-IN, NOT THE PRODUCT. A minimal Node TCP pipe proxy that the userspace-proxy benchmark can run
// in place of `kube-proxy --proxy-mode=userspace` (select it with --proxies=standin or
// KP_BENCH_PROXIES=standin). It exists to develop and sanity-check the harness and as a baseline for
// "what does a naive Node pipe proxy cost"; its numbers say nothing about kube-proxy-ts.
//
//   node userspace-standin-proxy.mjs --listen 7082 --target 7001 [--host 127.0.0.1]
//
// Every accepted connection is piped to host:target and back; an error on either side closes both.
// Runs until killed (the bench starts it under the netns watchdog).
import net from 'node:net';

const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
};
const listenPort = Number(arg('listen', ''));
const targetPort = Number(arg('target', ''));
const host = arg('host', '127.0.0.1');
if (!(listenPort > 0 && listenPort < 65536 && targetPort > 0 && targetPort < 65536)) {
  process.stderr.write('usage: userspace-standin-proxy.mjs --listen PORT --target PORT [--host IP]\n');
  process.exit(2);
}

let errorsLogged = 0;
const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = net.connect({ host, port: targetPort, noDelay: true });
  const closeBoth = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', closeBoth);
  upstream.on('error', closeBoth);
  client.on('close', closeBoth);
  upstream.on('close', closeBoth);
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on('error', (e) => {
  if (errorsLogged++ < 5) process.stderr.write(`userspace-standin-proxy: ${e.message}\n`);
  if (!server.listening) process.exit(1);
});
server.listen({ host, port: listenPort, backlog: 4096 }, () => {
  process.stderr.write(`userspace-standin-proxy (NOT the product): ${host}:${listenPort} -> ${host}:${targetPort}\n`);
});
