// `trace --live` in IPVS mode against real traffic, as it runs INSIDE the QEMU guest (one job step,
// chroot over the host's read-only root: everything here lives and dies with the VM). The guest's
// root namespace is the node: a dummy link holds the node address and the pod addresses, an echo
// server on each pod address answers with its own address. bin/kube-proxy (the host's build) syncs
// the cluster of $IN/scenario.json once (--once leaves the rules in place); then the IPVS tracer reads
// the kernel (readLive: ipvsadm, ipset, ip, iptables-save, through core's executor, read-only) and
// traces each probe, and real connections from the node show where the kernel sends them. When the
// build has the `trace` subcommand, `kube-proxy trace --live -o json` answers too. Prints one JSON
// object on stdout. Every tool runs with an argument array; every wait is bounded.
// Usage: node ipvs-trace-guest.mjs IN REPO
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { ipvsTracer } from '@kube-proxy/backend-ipvs/internal';
import { ExecaCommandExecutor } from '@kube-proxy/core';

const [IN, REPO] = process.argv.slice(2);
const sc = JSON.parse(readFileSync(`${IN}/scenario.json`, 'utf8'));
const out = { steps: [] };

function run(cmd, args, timeoutMs = 60_000) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', (e) => resolve({ code: null, stdout, stderr: stderr + String(e) }));
    child.on('close', (code) => {
      const r = { cmd: [cmd, ...args].join(' '), code, stdout, stderr: stderr.slice(-4000) };
      out.steps.push({ cmd: r.cmd, code, stderr: r.stderr.slice(-1500) });
      resolve(r);
    });
  });
}

/** One TCP connection from the node address to ip:port: the answering pod's address, or the error code. */
function probe(ip, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: ip, port, localAddress: sc.nodeIP, timeout: 5000 });
    let data = '';
    s.on('data', (d) => (data += d));
    s.on('end', () => resolve(data.trim()));
    s.on('timeout', () => {
      s.destroy();
      resolve('ERR timeout');
    });
    s.on('error', (e) => resolve(`ERR ${e.code}`));
  });
}

function icmpOutDestUnreachs() {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Icmp:'));
  const names = lines[0].split(/\s+/);
  const values = lines[1].split(/\s+/);
  return Number(values[names.indexOf('OutDestUnreachs')]);
}

async function main() {
  await run('/bin/ip', ['link', 'add', 'kpt0', 'type', 'dummy']);
  await run('/bin/ip', ['link', 'set', 'kpt0', 'up']);
  for (const ip of [sc.nodeIP, ...sc.pods]) await run('/bin/ip', ['addr', 'add', `${ip}/32`, 'dev', 'kpt0']);
  const servers = await Promise.all(
    sc.pods.map((ip) => new Promise((resolve) => {
      const srv = net.createServer((c) => c.end(`${ip}\n`));
      srv.listen(sc.podPort, ip, () => resolve(srv));
    })),
  );
  const started = Date.now();
  const proxy = await run(process.execPath, [`${REPO}/bin/kube-proxy`, '--proxy-mode=ipvs', `--manifests=${IN}/manifests`, `--hostname-override=${sc.node}`, `--cluster-cidr=${sc.clusterCIDR}`, '--once', '-v=2'], 240_000);
  out.proxy = { code: proxy.code, ms: Date.now() - started, stderr: proxy.stderr.slice(-3000) };

  const t0 = Date.now();
  const snapshot = await ipvsTracer.readLive(new ExecaCommandExecutor(), 'IPv4');
  out.readLiveMs = Date.now() - t0;
  if (snapshot.found === false) {
    out.lookedFor = snapshot.lookedFor;
  } else {
    out.source = snapshot.source;
    const addrs = await run('/bin/ip', ['-o', '-4', 'addr', 'show']);
    const addresses = [...addrs.stdout.matchAll(/inet (\S+)\//g)].map((m) => m[1]);
    const node = { name: sc.node, addresses };
    out.cases = {};
    for (const [name, c] of Object.entries(sc.cases)) {
      const packet = { family: 'IPv4', protocol: 'TCP', sourceIP: sc.nodeIP, destIP: c.ip, destPort: c.port, locallyGenerated: true };
      const trace = ipvsTracer.trace(snapshot, packet, node);
      const icmpBefore = icmpOutDestUnreachs();
      const reached = [];
      for (let i = 0; i < c.probes; i++) reached.push(await probe(c.ip, c.port));
      out.cases[name] = { trace, reached, icmpOutDestUnreachs: icmpOutDestUnreachs() - icmpBefore };
    }
  }
  const help = await run(process.execPath, [`${REPO}/bin/kube-proxy`, '--help'], 120_000);
  if (/\btrace\b/.test(help.stdout + help.stderr)) {
    const c = sc.cases.clusterIP;
    const cli = await run(process.execPath, [`${REPO}/bin/kube-proxy`, 'trace', '--live', '--proxy-mode=ipvs', `--from=${sc.nodeIP}`, `--to=${c.ip}:${c.port}`, '-o', 'json'], 120_000);
    out.cli = { code: cli.code, stdout: cli.stdout, stderr: cli.stderr.slice(-1500) };
  }
  for (const s of servers) s.close();
}

main()
  .catch((e) => {
    out.error = String(e && e.stack ? e.stack : e);
  })
  .finally(() => {
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exit(0);
  });
