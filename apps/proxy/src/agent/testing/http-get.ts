import { request } from 'node:http';

/* Test helper (not part of the app): one HTTP GET on a fresh connection, read to the end. */

export interface HttpResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export function httpGet(port: number, path: string, host = '127.0.0.1'): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
