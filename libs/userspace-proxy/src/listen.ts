import type { Server } from 'node:net';
import type { Socket as UdpSocket } from 'node:dgram';

/** Binds a TCP server; resolves the bound port, rejects with the bind error. */
export function listenOn(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    // exclusive: never share the port with another process's listener (cluster module semantics).
    // ipv6Only: the IPv6 proxier's "::" socket must not also take the IPv4 port of the same number.
    server.listen({ host, port, exclusive: true, backlog: 4096, ipv6Only: host.includes(':') }, () => {
      server.removeListener('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Binds a UDP socket; resolves the bound port, rejects with the bind error. */
export function bindUdp(socket: UdpSocket, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    socket.once('error', onError);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.removeListener('error', onError);
      resolve(socket.address().port);
    });
  });
}
