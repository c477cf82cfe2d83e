import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Network faults for the chaos suite: each Tally process of a cluster runs in a network namespace
 * of its own (a "pod"), joined to the host by a veth pair with addresses the run makes itself
 * (10.213.X.4i+1 on the host end, .4i+2 in the pod, one /30 per pod, X unique per run). A pod
 * reaches the run's Postgres, Redis, PgBouncer and fakes, which all listen on 127.0.0.1, at its
 * host end's address: a NAT table of the run's own on the host rewrites what arrives on the run's
 * veths to 127.0.0.1 (with `route_localnet` on those veths only), same port. The test reaches a
 * pod's HTTP port at the pod's address. So every packet between a process and anything else
 * crosses that process's veth, where nft rules in the pod's namespace drop it silently (a cut: a
 * connection neither answers nor closes until some timeout decides; deleting the rule heals it),
 * drop a random share, and `tc tbf` limits the bandwidth.
 *
 * Only what the run made is touched: its namespaces (their rules go with them), its veths and its
 * one host table (`ip tally_chaos_<pid>`). `destroy()` removes them; a process 'exit' hook does it
 * too when a run dies without it, and a later run removes what a killed run (its pid gone) left.
 * Needs root, iproute2 and nftables (`networkFaultsAvailable`).
 */

const ipBin = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip'].find((bin) => existsSync(bin)) ?? 'ip';
const nftBin = ['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft'].find((bin) => existsSync(bin)) ?? 'nft';
const tcBin = ['/usr/sbin/tc', '/sbin/tc', '/usr/bin/tc'].find((bin) => existsSync(bin)) ?? 'tc';
const sysctlBin = ['/usr/sbin/sysctl', '/sbin/sysctl', '/usr/bin/sysctl'].find((bin) => existsSync(bin)) ?? 'sysctl';

const namespacePrefix = 'tchaos-';

function run(bin: string, args: string[], input?: string): string {
  try {
    return execFileSync(bin, args, { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`${bin} ${args.join(' ')} failed: ${stderr.trim() || String(error)}`);
  }
}

function quietly(action: () => unknown): void {
  try {
    action();
  } catch {
    // Already gone.
  }
}

/** Root, `ip`, `nft` and `tc` present: the partition scenarios can run here. */
export function networkFaultsAvailable(): { ok: true } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'network faults need root (namespaces, nft)' };
  for (const [name, bin] of [
    ['ip (iproute2)', ipBin],
    ['nft (nftables)', nftBin],
    ['tc (iproute2)', tcBin],
  ]) {
    try {
      execFileSync(bin as string, ['-V'], { stdio: 'ignore' });
    } catch {
      return { ok: false, reason: `${name} is not installed` };
    }
  }
  return { ok: true };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the namespaces and host tables of earlier runs whose process is gone. */
function sweepDeadRuns(): void {
  const namespaces = run(ipBin, ['netns', 'list'])
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(namespacePrefix));
  for (const name of namespaces) {
    const pid = Number(name.slice(namespacePrefix.length).split('-')[0]);
    if (Number.isInteger(pid) && !pidAlive(pid)) quietly(() => run(ipBin, ['netns', 'delete', name]));
  }
  const tables = run(nftBin, ['list', 'tables', 'ip']).match(/tally_chaos_\d+/g) ?? [];
  for (const table of tables) {
    const pid = Number(table.slice('tally_chaos_'.length));
    if (!pidAlive(pid)) quietly(() => run(nftBin, ['delete', 'table', 'ip', table]));
  }
}

/** What a fault drops: everything, or the TCP traffic to and from one port of the host (a service). */
export type Peer = 'everything' | { port: number; name: string };

export interface PodFault {
  /** Deletes the fault's rules (or qdiscs): the link heals. */
  heal(): void;
  readonly description: string;
}

/** One process's network namespace and its veth to the host. */
export class Pod {
  private faults = 0;

  constructor(
    readonly name: string,
    readonly namespace: string,
    /** The host end's address: where the pod reaches Postgres, Redis and the fakes. */
    readonly hostAddress: string,
    /** The pod's own address: where the test reaches the process. */
    readonly address: string,
    readonly hostVeth: string,
    readonly podVeth: string,
  ) {}

  /** The command that runs `command args` inside the pod's namespace (same pid: `ip netns exec` execs). */
  wrap(command: string, args: string[]): [string, string[]] {
    return [ipBin, ['netns', 'exec', this.namespace, command, ...args]];
  }

  /** An environment value with 127.0.0.1 (the run's services) rewritten to where the pod reaches them. */
  rewrite(value: string): string {
    return value.replaceAll('127.0.0.1', this.hostAddress);
  }

  private match(peer: Peer, direction: 'out' | 'in'): string {
    const veth = direction === 'out' ? `oifname "${this.podVeth}"` : `iifname "${this.podVeth}"`;
    if (peer === 'everything') return veth;
    return `${veth} ip ${direction === 'out' ? 'daddr' : 'saddr'} ${this.hostAddress} tcp ${
      direction === 'out' ? 'dport' : 'sport'
    } ${peer.port}`;
  }

  /** Rules of one fault: a table of its own in the pod's namespace, deleted to heal. */
  private rules(description: string, verdict: (match: string) => string, peers: Peer[]): PodFault {
    this.faults += 1;
    const table = `fault_${this.faults}`;
    const lines = peers.flatMap((peer) => [verdict(this.match(peer, 'out')), verdict(this.match(peer, 'in'))]);
    const [outRules, inRules] = [
      lines.filter((line) => line.includes('oifname')),
      lines.filter((line) => line.includes('iifname')),
    ];
    const ruleset = [
      `table inet ${table} {`,
      '  chain out {',
      '    type filter hook output priority filter; policy accept;',
      ...outRules.map((rule) => `    ${rule}`),
      '  }',
      '  chain in {',
      '    type filter hook input priority filter; policy accept;',
      ...inRules.map((rule) => `    ${rule}`),
      '  }',
      '}',
      '',
    ].join('\n');
    run(ipBin, ['netns', 'exec', this.namespace, nftBin, '-f', '-'], ruleset);
    let healed = false;
    return {
      description,
      heal: () => {
        if (healed) return;
        healed = true;
        quietly(() => run(ipBin, ['netns', 'exec', this.namespace, nftBin, 'delete', 'table', 'inet', table]));
      },
    };
  }

  private static describe(peers: Peer[]): string {
    return peers.map((peer) => (peer === 'everything' ? 'everything' : peer.name)).join(', ');
  }

  /** Silently drops every packet between the process and `peers`, both ways, until healed. */
  cut(peers: Peer[]): PodFault {
    // guard: chaos-partition-drop
    return this.rules(`${this.name} ✂ ${Pod.describe(peers)}`, (match) => `${match} drop`, peers);
  }

  /** Drops `percent` % of the packets between the process and `peers`, each way, at random. */
  loss(peers: Peer[], percent: number): PodFault {
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) throw new RangeError(`loss ${percent} %`);
    return this.rules(
      `${this.name} loses ${percent} % to ${Pod.describe(peers)}`,
      (match) => `${match} numgen random mod 100 < ${percent} drop`,
      peers,
    );
  }

  /**
   * A token bucket (`tc tbf`) on both ends of the veth: at most `rate` (tc syntax, "2mbit") each
   * way, packets queued up to `latencyMs`, then dropped.
   */
  bandwidth(rate: string, latencyMs = 200): PodFault {
    const args = (dev: string) => ['qdisc', 'add', 'dev', dev, 'root', 'tbf', 'rate', rate, 'burst', '32kbit'];
    run(ipBin, ['netns', 'exec', this.namespace, tcBin, ...args(this.podVeth), 'latency', `${latencyMs}ms`]);
    run(tcBin, [...args(this.hostVeth), 'latency', `${latencyMs}ms`]);
    let healed = false;
    return {
      description: `${this.name} limited to ${rate}`,
      heal: () => {
        if (healed) return;
        healed = true;
        quietly(() =>
          run(ipBin, ['netns', 'exec', this.namespace, tcBin, 'qdisc', 'del', 'dev', this.podVeth, 'root']),
        );
        quietly(() => run(tcBin, ['qdisc', 'del', 'dev', this.hostVeth, 'root']));
      },
    };
  }
}

/** The run's pods, its address block and its host NAT table. */
export class PodNetwork {
  readonly pods: Pod[] = [];
  private destroyed = false;
  private readonly onExit = () => this.destroy();

  private constructor(
    /** X of 10.213.X.0/24. */
    readonly block: number,
    readonly table: string,
    private readonly tag: string,
  ) {}

  /**
   * Picks a 10.213.X.0/24 no host interface uses, creates the run's NAT table. `tag` tells two
   * networks of one run apart (main and pooled cluster).
   */
  static create(tag: string): PodNetwork {
    const available = networkFaultsAvailable();
    if (!available.ok) throw new Error(available.reason);
    sweepDeadRuns();
    const used = new Set(
      (run(ipBin, ['-4', '-o', 'addr', 'show']).match(/10\.213\.(\d+)\./g) ?? []).map((prefix) =>
        Number(prefix.split('.')[2]),
      ),
    );
    const start = (process.pid * 7 + tag.length * 31) % 254;
    let block = -1;
    for (let i = 0; i < 254; i += 1) {
      const candidate = ((start + i) % 254) + 1;
      if (!used.has(candidate)) {
        block = candidate;
        break;
      }
    }
    if (block < 0) throw new Error('no free 10.213.X.0/24 block for the pods');
    const table = `tally_chaos_${process.pid}`;
    const network = new PodNetwork(block, table, tag);
    // One table per test process, shared by its networks: one DNAT chain rule per block.
    const exists = run(nftBin, ['list', 'tables', 'ip']).includes(`table ip ${table}\n`);
    if (!exists) {
      run(
        nftBin,
        ['-f', '-'],
        [
          `table ip ${table} {`,
          '  chain prerouting {',
          '    type nat hook prerouting priority dstnat; policy accept;',
          '  }',
          '}',
          '',
        ].join('\n'),
      );
    }
    run(nftBin, [
      'add',
      'rule',
      'ip',
      table,
      'prerouting',
      'iifname',
      `tc${block}h*`,
      'ip',
      'daddr',
      `10.213.${block}.0/24`,
      'dnat',
      'to',
      '127.0.0.1',
    ]);
    process.once('exit', network.onExit);
    return network;
  }

  /** A namespace and veth for process `name`, its loopback up, its default route via the host end. */
  addPod(name: string): Pod {
    const index = this.pods.length;
    if (index >= 63) throw new Error('at most 63 pods per network');
    const namespace = `${namespacePrefix}${process.pid}-${this.tag}-${name}`.slice(0, 60);
    const hostVeth = `tc${this.block}h${index}`;
    const podVeth = `tc${this.block}n${index}`;
    const hostAddress = `10.213.${this.block}.${4 * index + 1}`;
    const address = `10.213.${this.block}.${4 * index + 2}`;
    const pod = new Pod(name, namespace, hostAddress, address, hostVeth, podVeth);
    this.pods.push(pod);
    run(ipBin, ['netns', 'add', namespace]);
    run(ipBin, ['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', podVeth]);
    run(ipBin, ['link', 'set', podVeth, 'netns', namespace]);
    run(ipBin, ['addr', 'add', `${hostAddress}/30`, 'dev', hostVeth]);
    // DNAT to 127.0.0.1 of what arrives on this veth (and its replies) needs route_localnet, on
    // this interface only.
    run(sysctlBin, ['-q', '-w', `net.ipv4.conf.${hostVeth}.route_localnet=1`]);
    run(ipBin, ['link', 'set', hostVeth, 'up']);
    run(ipBin, ['-n', namespace, 'addr', 'add', `${address}/30`, 'dev', podVeth]);
    run(ipBin, ['-n', namespace, 'link', 'set', podVeth, 'up']);
    run(ipBin, ['-n', namespace, 'link', 'set', 'lo', 'up']);
    run(ipBin, ['-n', namespace, 'route', 'add', 'default', 'via', hostAddress]);
    return pod;
  }

  /** Removes the pods (namespace, veth, their rules and qdiscs) and this network's NAT rule. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    process.off('exit', this.onExit);
    for (const pod of this.pods) {
      // Deleting the namespace deletes the veth pair (its peer lived there) and the pod's rules.
      quietly(() => run(ipBin, ['netns', 'delete', pod.namespace]));
      quietly(() => run(ipBin, ['link', 'delete', pod.hostVeth]));
    }
    quietly(() => {
      const listing = run(nftBin, ['-a', 'list', 'chain', 'ip', this.table, 'prerouting']);
      const handles = [...listing.matchAll(new RegExp(`tc${this.block}h\\*.*# handle (\\d+)`, 'g'))].map(
        (match) => match[1] as string,
      );
      for (const handle of handles) run(nftBin, ['delete', 'rule', 'ip', this.table, 'prerouting', 'handle', handle]);
      if (!/dnat/.test(run(nftBin, ['list', 'chain', 'ip', this.table, 'prerouting']))) {
        run(nftBin, ['delete', 'table', 'ip', this.table]);
      }
    });
  }
}
