/**
 * A full garbage collection in the proxy's Node process, from outside, so the soak compares retained
 * memory rather than wherever V8's heap happens to be in its grow-then-collect cycle (tens of MB under
 * churn). SIGUSR1 is Node's documented signal to open the inspector (127.0.0.1:9229 of the process's
 * network namespace); a small client in that namespace then asks for HeapProfiler.collectGarbage over
 * the DevTools protocol. The proxy is not changed for it and keeps running.
 */
import type { SimulatedNode } from '@kube-proxy/testing-netns';

const INSPECTOR_PORT = 9229;

const CLIENT = `
const port = Number(process.argv[1]);
const out = (o) => { process.stdout.write(JSON.stringify(o) + '\\n'); process.exit(0); };
setTimeout(() => out({ ok: false, error: 'timed out' }), 15000).unref();
(async () => {
  let list;
  for (let i = 0; i < 50 && !list; i++) {
    try { list = await (await fetch('http://127.0.0.1:' + port + '/json/list')).json(); }
    catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  const url = list && list[0] && list[0].webSocketDebuggerUrl;
  if (!url) return out({ ok: false, error: 'no inspector target' });
  const ws = new WebSocket(url);
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = () => rej(new Error('websocket error')); });
  const started = Date.now();
  await new Promise((res) => {
    ws.onmessage = (ev) => { if (JSON.parse(String(ev.data)).id === 1) res(); };
    ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
  });
  ws.close();
  out({ ok: true, ms: Date.now() - started });
})().catch((e) => out({ ok: false, error: String(e && e.message || e) }));
`;

/** Opens `pid`'s inspector (SIGUSR1; a no-op once open) and runs a full collection; throws when it could not. */
export async function forceGc(node: SimulatedNode, ns: string, pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR1');
  const r = await node.exec(ns, process.execPath, ['--experimental-websocket', '--no-warnings', '-e', CLIENT, String(INSPECTOR_PORT)], {
    timeoutMs: 25_000,
    allowFailure: true,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  let res: { ok?: boolean; ms?: number; error?: string } = {};
  try {
    res = JSON.parse(line) as typeof res;
  } catch {
    /* below */
  }
  if (!res.ok) throw new Error(`could not force a GC in pid ${pid}: ${res.error ?? `${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`}`);
  return res.ms ?? 0;
}
