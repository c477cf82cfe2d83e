import net from 'node:net';

/**
 * A local TCP port nothing listens on right now (bound to `host`, then released): for a server a
 * test starts next, or for a "cannot reach" test (connection refused, nothing sent).
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
