import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting connections and closes idle keep-alive sockets; waits for in-flight requests. */
  close(): Promise<void>;
}

export function startHttpServer(app: Express, port: number, host = '0.0.0.0'): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      // Providers keep connections open; a slow close would outlive the shutdown deadline.
      server.keepAliveTimeout = 5_000;
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}
