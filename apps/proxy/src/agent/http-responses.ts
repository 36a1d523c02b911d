import type { ServerResponse } from 'node:http';

/* Response helpers with the headers Go's net/http handlers upstream set. */

export function sendJSON(res: ServerResponse, status: number, body: string, extraHeaders: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', ...extraHeaders });
  res.end(body);
}

export function sendText(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}

/** What Go's ServeMux answers for an unknown path. */
export function sendNotFound(res: ServerResponse): void {
  sendText(res, 404, '404 page not found\n');
}

/** The request path without the query string. */
export function pathOf(url: string | undefined): string {
  const q = (url ?? '/').indexOf('?');
  return q < 0 ? (url ?? '/') : (url ?? '/').slice(0, q);
}
