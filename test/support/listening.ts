import { readFileSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces } from 'node:os';

/** "0100007F" (how /proc/net/tcp writes 127.0.0.1, little-endian) → "127.0.0.1". */
function ipv4Of(hex: string): string {
  const bytes = hex.match(/../g)?.map((byte) => Number.parseInt(byte, 16)) ?? [];
  return bytes.reverse().join('.');
}

/**
 * The local addresses the kernel has a listening TCP socket on for `port` (Linux, /proc/net/tcp
 * and tcp6): `127.0.0.1`, `0.0.0.0`, or `ipv6:<hex>` for an IPv6 socket (`::` is all zeros).
 */
export function listeningAddresses(port: number): string[] {
  const found: string[] = [];
  for (const [file, decode] of [
    ['/proc/net/tcp', ipv4Of],
    ['/proc/net/tcp6', (hex: string) => `ipv6:${hex}`],
  ] as const) {
    let table = '';
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue;
      const [address, portHex] = local.split(':');
      if (address && portHex && Number.parseInt(portHex, 16) === port) found.push(decode(address));
    }
  }
  return found.sort();
}

/** An IPv4 address of this machine other than the loopback (another host on its network would use it). */
export function nonLoopbackAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
}

/** Whether a TCP connection to host:port is accepted. */
export function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
