import type { SimulatedNode } from '@kube-proxy/testing-netns';

export interface HttpAnswer {
  /** HTTP status, or 0 when the request failed (then `error` says why). */
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly error?: string;
}

/** One bounded `GET url` (plain Node, no curl) run inside namespace `ns`. Never throws for HTTP/network errors. */
export async function httpGet(node: SimulatedNode, ns: string, url: string, timeoutMs = 2000): Promise<HttpAnswer> {
  const script = `
const http = require('node:http');
const out = (o) => { process.stdout.write(JSON.stringify(o) + '\\n'); process.exit(0); };
const req = http.get(process.argv[1], { timeout: Number(process.argv[2]), agent: false }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (d) => { if (body.length < 65536) body += d; });
  res.on('end', () => out({ status: res.statusCode, body, headers: res.headers }));
  res.on('error', (e) => out({ status: 0, body, headers: {}, error: String(e.code || e.message) }));
});
req.on('timeout', () => { req.destroy(); out({ status: 0, body: '', headers: {}, error: 'TIMEOUT' }); });
req.on('error', (e) => out({ status: 0, body: '', headers: {}, error: String(e.code || e.message) }));
`;
  const r = await node.exec(ns, process.execPath, ['-e', script, url, String(timeoutMs)], { timeoutMs: timeoutMs + 10_000, allowFailure: true });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as HttpAnswer;
  } catch {
    return { status: 0, body: '', headers: {}, error: `no answer from the GET helper: ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}` };
  }
}
