#!/usr/bin/env node
// Echo server for the netns harness. Plain Node (no build), meant to run inside a pod namespace:
//
//   node echo-server.mjs --name pod1 --tcp 8080,8081 --udp 5353 [--max-lifetime-s 600] [--host ::]
//
// TCP: on every connection it writes `<name> <remoteAddr>:<remotePort>\n` and closes.
// UDP: on every datagram it replies `<name> <remoteAddr>:<remotePort>[ <request>]` (the request text,
// up to 64 bytes, lets a client match replies to requests).
// IPv4-mapped addresses (::ffff:a.b.c.d) are reported as plain IPv4.
// Prints `READY <json>` on stdout once every port listens. Exits when stdin closes (the parent went
// away), on SIGTERM/SIGINT, or after the maximum lifetime, so it can never outlive a test run for long.
import net from 'node:net';
import dgram from 'node:dgram';

function parseArgs(argv) {
  const o = { name: '', tcp: [], udp: [], maxLifetimeS: 600, host: '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`missing value for ${a}`);
      return x;
    };
    const ports = (s) =>
      s
        .split(',')
        .filter(Boolean)
        .map((p) => {
          const n = Number(p);
          if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`bad port ${p}`);
          return n;
        });
    if (a === '--name') o.name = v();
    else if (a === '--tcp') o.tcp.push(...ports(v()));
    else if (a === '--udp') o.udp.push(...ports(v()));
    else if (a === '--max-lifetime-s') o.maxLifetimeS = Number(v());
    else if (a === '--host') o.host = v();
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.name) throw new Error('--name is required');
  if (!(o.maxLifetimeS > 0)) throw new Error('--max-lifetime-s must be > 0');
  return o;
}

const norm = (addr) => (typeof addr === 'string' && addr.startsWith('::ffff:') ? addr.slice(7) : addr);

const opts = parseArgs(process.argv.slice(2));
const closers = [];
let exiting = false;
function exit(code, why) {
  if (exiting) return;
  exiting = true;
  if (why) process.stderr.write(`echo-server ${opts.name}: exiting: ${why}\n`);
  for (const c of closers) {
    try {
      c();
    } catch {
      /* ignore */
    }
  }
  // Do not wait for lingering sockets.
  setTimeout(() => process.exit(code), 50).unref();
}

const lifetime = setTimeout(() => exit(0, `max lifetime ${opts.maxLifetimeS}s reached`), opts.maxLifetimeS * 1000);
lifetime.unref();
process.stdin.on('end', () => exit(0, 'stdin closed'));
process.stdin.on('close', () => exit(0, 'stdin closed'));
process.stdin.on('error', () => exit(0, 'stdin error'));
process.stdin.resume();
process.on('SIGTERM', () => exit(0, 'SIGTERM'));
process.on('SIGINT', () => exit(0, 'SIGINT'));

// Dual-stack '::' when IPv6 is usable in this namespace, else 0.0.0.0.
async function pickHost() {
  if (opts.host) return opts.host;
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve('0.0.0.0'));
    s.listen({ host: '::', port: 0, ipv6Only: false }, () => s.close(() => resolve('::')));
  });
}

function listenTcp(host, port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      sock.on('error', () => undefined);
      sock.setTimeout(5000, () => sock.destroy());
      sock.end(`${opts.name} ${norm(sock.remoteAddress)}:${sock.remotePort}\n`);
    });
    server.on('error', reject);
    server.listen({ host, port, ipv6Only: false, exclusive: true }, () => {
      closers.push(() => server.close());
      resolve();
    });
  });
}

function listenUdp(host, port) {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', ipv6Only: false });
    sock.on('message', (msg, rinfo) => {
      const req = msg.toString('utf8', 0, Math.min(msg.length, 64)).trim();
      const reply = `${opts.name} ${norm(rinfo.address)}:${rinfo.port}${req ? ` ${req}` : ''}`;
      sock.send(reply, rinfo.port, rinfo.address, () => undefined);
    });
    sock.once('error', reject);
    sock.bind({ address: host, port, exclusive: true }, () => {
      sock.removeListener('error', reject);
      sock.on('error', (e) => process.stderr.write(`echo-server ${opts.name}: udp ${port}: ${e.message}\n`));
      closers.push(() => sock.close());
      resolve();
    });
  });
}

try {
  const host = await pickHost();
  for (const p of opts.tcp) await listenTcp(host, p);
  for (const p of opts.udp) await listenUdp(host, p);
  process.stdout.write(`READY ${JSON.stringify({ name: opts.name, host, tcp: opts.tcp, udp: opts.udp, pid: process.pid })}\n`);
} catch (e) {
  process.stderr.write(`echo-server ${opts.name}: ${e.message}\n`);
  exit(1);
}
