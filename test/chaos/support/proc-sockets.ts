import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The local ports of the TCP connections process `pid` holds to `remotePort` on this machine
 * (Linux: its socket inodes from /proc/<pid>/fd matched against /proc/<pid>/net/tcp{,6}). Postgres
 * shows the same port as `pg_stat_activity.client_port`, which is how the chaos suite tells one
 * worker's database sessions from another's (they all use the application name `tally-worker`).
 * Returns undefined where /proc is not readable (not Linux).
 */
export function tcpPortsTo(pid: number, remotePort: number): Set<number> | undefined {
  let inodes: Set<string>;
  try {
    inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1]) inodes.add(match[1]);
      } catch {
        // The descriptor closed while we listed it.
      }
    }
  } catch {
    return undefined;
  }
  const ports = new Set<number>();
  // The process's own view (its network namespace: a chaos pod's differs from the test's).
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, remote, inode] = [fields[1], fields[2], fields[9]];
      if (!local || !remote || !inode || !inodes.has(inode)) continue;
      if (Number.parseInt(remote.split(':')[1] ?? '', 16) !== remotePort) continue;
      ports.add(Number.parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}
