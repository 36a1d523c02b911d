import { isIP } from 'node:net';

/** A parsed `host:port` bind address; `host` undefined means every address. */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
  /** As configured, for logs. */
  readonly text: string;
}

/**
 * Parses healthzBindAddress / metricsBindAddress (`0.0.0.0:10256`, `[::]:10256`, `127.0.0.1:10249`,
 * `:10256`). Go listens on "tcp" with an unspecified IPv4 or IPv6 host dual-stack, on every address,
 * so both unspecified hosts become "every address" here too (Node listens on `::` with IPv4 mapped,
 * or on 0.0.0.0 when the host has no IPv6).
 */
export function parseBindAddress(text: string): BindAddress {
  const colon = text.lastIndexOf(':');
  if (colon < 0) throw new Error(`bind address ${JSON.stringify(text)}: missing port`);
  let host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new Error(`bind address ${JSON.stringify(text)}: invalid port`);
  // node:net's check on purpose: this host goes straight to listen(), which takes exactly what isIP accepts.
  if (host !== '' && host !== 'localhost' && isIP(host) === 0) throw new Error(`bind address ${JSON.stringify(text)}: invalid host`);
  const everywhere = host === '' || host === '0.0.0.0' || host === '::';
  return { host: everywhere ? undefined : host, port, text };
}
