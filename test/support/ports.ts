import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports handed out come from below the kernel's ephemeral range (`ip_local_port_range`, 32768 and
 * up on Linux by default), never from it. A server the tests restart on the same port (a
 * supervised worker's metrics port, a crashed Postgres, a restarted Redis or PgBouncer) is down
 * for a moment, and a port of the ephemeral range can be taken in that moment as the local port of
 * any outgoing connection on the machine (PgBouncer reconnecting its pool, a client's reconnect);
 * a connection that stays open keeps it, and the restarted server fails with EADDRINUSE for as
 * long (the chaos suite's pgbouncer-restart once lost worker-1 for 60 s so). No outgoing
 * connection is ever given a port below the range.
 */
const ephemeralLow = (() => {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const value = Number(low);
    return Number.isInteger(value) && value > 2_048 ? value : 32_768;
  } catch {
    return 32_768;
  }
})();
const rangeLow = Math.max(1_025, Math.min(15_000, ephemeralLow - 4_096));
const rangeHigh = ephemeralLow - 1;

function listensOn(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * A local TCP port nothing listens on right now (bound to `host` and to every address, then
 * released), below the ephemeral range: for a server a test starts next, or for a "cannot reach"
 * test (connection refused, nothing sent).
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = rangeLow + Math.floor(Math.random() * (rangeHigh - rangeLow + 1));
    if ((await listensOn(port, '0.0.0.0')) && (host === '0.0.0.0' || (await listensOn(port, host)))) return port;
  }
  throw new Error(`no free port in ${rangeLow}-${rangeHigh}`);
}
