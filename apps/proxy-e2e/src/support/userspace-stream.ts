import { scriptPath, startServerScript, type EchoServer, type SimulatedNode } from '@kube-proxy/testing-netns';

/**
 * Drives libs/testing/netns/src/userspace-stream.mjs: a TCP server in pod namespaces that streams a verifiable
 * byte pattern slowly (a long transfer), and a client that reports which pod serves it, its progress,
 * and whether every byte arrived intact.
 */

/** Starts the stream server in `ns` (on 0.0.0.0:`port`) and waits until it listens. */
export function startStreamServer(
  node: SimulatedNode,
  ns: string,
  o: { port: number; name?: string; maxLifetimeS?: number; readyTimeoutMs?: number },
): Promise<EchoServer> {
  const name = o.name ?? node.pods.find((p) => p.ns === ns)?.name ?? ns;
  const args = ['server', '--name', name, '--port', String(o.port), '--max-lifetime-s', String(o.maxLifetimeS ?? 600)];
  return startServerScript(node, ns, name, 'userspace-stream.mjs', args, o.readyTimeoutMs);
}

export interface TransferResult {
  readonly ok: boolean;
  readonly bytes: number;
  readonly expected: number;
  readonly patternOk: boolean;
  readonly firstBad: number | null;
  /** The server's FIN reached the client. */
  readonly ended: boolean;
  readonly error: string | null;
  /** Client-side duration. */
  readonly ms: number;
  /** Wall-clock time (Date.now()) when the result arrived. */
  readonly at: number;
}

export interface Transfer {
  /** Which pod serves the transfer, and the source address it saw. Rejects if the transfer ended first. */
  readonly header: Promise<{ pod: string; source: string }>;
  /** The outcome; always resolves (a crashed or hung client gives `ok: false`). */
  readonly done: Promise<TransferResult>;
  /** Bytes received so far (from the client's last progress report). */
  progress(): number;
  /** Everything the client printed (for failure messages). */
  output(): string;
}

/**
 * Starts one long download through `host:port` from namespace `ns`: `bytes` bytes paced over
 * `durationMs`. Bounded: the client gives up after `timeoutMs`, and is killed 5 s after that.
 */
export function startTransfer(
  node: SimulatedNode,
  ns: string,
  o: { host: string; port: number; bytes: number; durationMs: number; timeoutMs: number },
): Transfer {
  const child = node.spawn(ns, process.execPath, [
    scriptPath('userspace-stream.mjs'),
    'client',
    '--host',
    o.host,
    '--port',
    String(o.port),
    '--bytes',
    String(o.bytes),
    '--duration-ms',
    String(o.durationMs),
    '--timeout-ms',
    String(o.timeoutMs),
  ]);
  let out = '';
  let err = '';
  let buf = '';
  let progress = 0;
  let onHeader: (h: { pod: string; source: string }) => void = () => undefined;
  let onHeaderFail: (e: Error) => void = () => undefined;
  let onDone: (r: TransferResult) => void = () => undefined;
  const header = new Promise<{ pod: string; source: string }>((res, rej) => {
    onHeader = res;
    onHeaderFail = rej;
  });
  header.catch(() => undefined); // callers may not wait for it
  const done = new Promise<TransferResult>((res) => (onDone = res));
  const failed = (error: string): TransferResult => ({
    ok: false,
    bytes: progress,
    expected: o.bytes,
    patternOk: false,
    firstBad: null,
    ended: false,
    error,
    ms: 0,
    at: Date.now(),
  });
  const guard = setTimeout(() => {
    child.kill('SIGKILL');
    onHeaderFail(new Error('transfer client hung'));
    onDone(failed('client hung; killed'));
  }, o.timeoutMs + 5000);
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    if (err.length < 16_000) err += d;
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => {
    if (out.length < 64_000) out += d;
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let ev: Record<string, unknown>;
      try {
        ev = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (ev['event'] === 'header') onHeader({ pod: String(ev['pod']), source: String(ev['source']) });
      else if (ev['event'] === 'progress') progress = Number(ev['bytes']);
      else if (ev['event'] === 'done') {
        progress = Number(ev['bytes']);
        clearTimeout(guard);
        onHeaderFail(new Error(`the transfer ended before its header arrived: ${line}`));
        onDone({ ...(ev as unknown as Omit<TransferResult, 'at'>), at: Date.now() });
      }
    }
  });
  child.once('exit', (code, sig) => {
    clearTimeout(guard);
    const why = `client exited (${code ?? sig}) without a result: ${err.slice(-2000)}`;
    onHeaderFail(new Error(why));
    onDone(failed(why));
  });
  return { header, done, progress: () => progress, output: () => `${out}${err ? `\nstderr: ${err}` : ''}` };
}
