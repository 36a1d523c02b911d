import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository root: bin/kube-proxy runs from here, and examples/ resolves against it. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
/** The real launcher an operator runs (it starts apps/proxy/dist). */
export const KUBE_PROXY_BIN = `${REPO_ROOT}bin/kube-proxy`;

/** One finished run of bin/kube-proxy: its exit status (1 when it died another way) and its output. */
export interface BinRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs bin/kube-proxy with `args` (an argument array, no shell) from the repository root, bounded to 60 s. */
export function runKubeProxy(args: readonly string[]): Promise<BinRun> {
  return new Promise((resolve) => {
    execFile(KUBE_PROXY_BIN, args, { cwd: REPO_ROOT, timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, out: stdout, err: stderr });
    });
  });
}

/** A TCP port free right now on 127.0.0.1 (bound and released), for a proxy's metrics address. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
