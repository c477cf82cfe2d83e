// Network partitions, lossy and slow links between Tally's processes and Postgres (or PgBouncer)
// and Redis, made with the main cluster's network namespaces (support/network.ts): a cut drops
// every packet silently (a connection neither answers nor closes), then heals by deleting the rule.
import { sql } from 'kysely';
import type { ProfiledScenario } from './process-fault-scenarios';
import { inInboxTransaction, sessionsOf } from './process-fault-scenarios';
import type { ScenarioContext } from './scenario';
import { type ChaosCluster, type SupervisedProcess, shutdownTimeoutMs } from './support/chaos-cluster';
import { purchaseStream } from './support/events';
import { settle } from './support/invariants';
import type { Peer, PodFault } from './support/network';
import { rerunEvidence } from './support/rerun-evidence';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

/**
 * How long a provider waits for an answer before it counts the delivery as failed. Neither
 * Stripe's nor RevenueCat's is in /work/shared/docs/providers.md; Stripe's documentation speaks
 * of "a few seconds" and a 10 s wait is the common figure, so 10 s is the bound here, and every
 * answer during a partition must come well inside it (`promptAnswerMs`).
 */
export const providerTimeoutMs = 10_000;
/**
 * An answer during a partition is prompt when it comes within this: ingest's answer deadline
 * (INGEST_ANSWER_DEADLINE_MS, 4 s in the chaos cluster) plus slack for a loaded 2-core machine.
 */
export const promptAnswerMs = 7_000;
/**
 * After healing, the backlog (every event of the scenario processed, every app webhook delivered)
 * must drain within this: the providers' retry backoff (the simulator's, ≤ 1 s), a pooled
 * connection's query timeout, BullMQ's stalled check and the relay's sweep, each a few seconds.
 */
export const drainBoundMs = 30_000;
/**
 * On a link that keeps losing up to 15 % of its packets the drain is bounded too, more loosely:
 * each lost segment is retransmitted on a backoff of 0.2 s and more (measured: 5 % drained in
 * under 1 s, 15 % in 8–15 s). At 30 % it is only measured, up to `lossyMeasureMs`: with the
 * chaos cluster's 2 s BullMQ lock and 2 s Redis command timeout the workers lose locks and
 * enqueues time out faster than jobs finish (docs/reliability.md); it drains once healed.
 */
export const lossyDrainBoundMs = 60_000;
export const lossyMeasureMs = 60_000;

/** What the processes reach as Postgres (PgBouncer, when pooled) and as Redis: the peers a cut names. */
export function services(cluster: ChaosCluster): { postgres: Peer; redis: Peer } {
  return {
    // Through PgBouncer the processes' "Postgres" is the pooler.
    postgres: { port: cluster.pgbouncer ? cluster.pgbouncer.port : cluster.postgres.port, name: 'Postgres' },
    redis: { port: cluster.redis.port, name: 'Redis' },
  };
}

function podOf(process: SupervisedProcess) {
  if (!process.pod) {
    throw new Error(
      `${process.name} runs on the host's network: partition scenarios need the cluster in network namespaces (root, iproute2, nftables; not CHAOS_NETWORK=0)`,
    );
  }
  return process.pod;
}

interface Cut {
  /** Who is cut off, and from what. */
  victims: (cluster: ChaosCluster) => SupervisedProcess[];
  peers: (cluster: ChaosCluster) => Peer[];
}

interface PartitionPlan {
  name: string;
  /** Cut at once, healed at once. */
  cuts: Cut[];
  /** Cut only once a worker is inside an inbox transaction (holding its locks). */
  midTransaction?: boolean;
  what: string;
}

/** Statuses and the slowest answer among the deliveries that started in [from, to). */
function answersBetween(ctx: ScenarioContext, from: number, to: number) {
  const timings = ctx.sim.timings.filter((timing) => timing.startedAt >= from && timing.startedAt < to);
  const statuses: Record<string, number> = {};
  for (const timing of timings) statuses[timing.status] = (statuses[timing.status] ?? 0) + 1;
  const slow = timings.filter((timing) => timing.status === 0 || timing.ms > promptAnswerMs);
  const maxMs = timings.reduce((max, timing) => Math.max(max, timing.ms), 0);
  return { count: timings.length, statuses, slow, maxMs };
}

/** The scenario's inbox rows not processed yet, by status (the backlog the cut built). */
async function inFlight(ctx: ScenarioContext): Promise<string> {
  const ids = ctx.events.map((event) => event.id);
  const { rows } = await sql<{ status: string; count: number }>`
    SELECT status, count(*)::int AS count FROM inbox_events
     WHERE provider_event_id = ANY(${ids}::text[]) GROUP BY status ORDER BY status`.execute(ctx.cluster.db);
  const stored = rows.reduce((sum, row) => sum + row.count, 0);
  return `${ctx.sim.accepted().length} events accepted, ${stored} rows ${JSON.stringify(
    Object.fromEntries(rows.map((row) => [row.status, row.count])),
  )}`;
}

/** Warning and error lines each process logged since `before`, counted by message (digits as N). */
function warningsSince(cluster: ChaosCluster, before: Map<SupervisedProcess, number>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const process of cluster.processes()) {
    for (const line of process.output.slice(before.get(process) ?? 0).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        if ((entry.level ?? 0) < 40) continue;
        const key = `${process.name.replace(/-\d+$/, '')}: ${entry.msg}${
          entry.err?.message ? ` (${entry.err.message.replace(/\d+/g, 'N').slice(0, 80)})` : ''
        }`;
        counts[key] = (counts[key] ?? 0) + 1;
      } catch {
        // A partial line.
      }
    }
  }
  return counts;
}

function restartsOf(cluster: ChaosCluster): Map<SupervisedProcess, number> {
  return new Map(cluster.processes().map((process) => [process, process.restarts]));
}

/**
 * Until `done`, `pending` rows of the scenario's events: polled after healing, so the drain
 * time is measured from the heal to the moment nothing of the scenario is left in flight.
 */
async function drained(ctx: ScenarioContext, deliveries: Promise<void>, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  await Promise.race([deliveries, sleep(timeoutMs)]);
  return settle(ctx.cluster.db, Math.max(0, deadline - Date.now()));
}

/**
 * A stream of purchases paced over the whole scenario (before, during and after the cut); the
 * cut lasts `cutMs`; then heal and measure how long the backlog takes to drain. Invariants of
 * the issue besides those checked after every scenario: every answer during the partition prompt
 * (a 5xx or a 200 within `promptAnswerMs`, never no answer within the provider's timeout), the
 * drain within `drainBoundMs`, no process restarted.
 */
async function runPartition(ctx: ScenarioContext, plan: PartitionPlan, cutMs: number): Promise<void> {
  const { cluster } = ctx;
  const cuts = plan.cuts.map((cut) => ({ victims: cut.victims(cluster), peers: cut.peers(cluster) }));
  for (const cut of cuts) for (const victim of cut.victims) podOf(victim);
  const leadMs = 2_000;
  const tailMs = 2_000;
  const prefix = plan.name.replace(/[^a-z0-9]/g, '');
  const users = Array.from({ length: 6 }, (_, i) => `${prefix}-u${i}`);
  const count = Math.round(((leadMs + cutMs + tailMs) / 1_000) * size(ctx, 6, 8));
  const { events, expected } = purchaseStream(ctx.rng, prefix, users, count);
  for (const [user, balance] of expected) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + balance);
  ctx.events.push(...events);
  const restartsBefore = restartsOf(cluster);
  const deliveries = ctx.sim.deliverAll(events, 8, leadMs + cutMs + tailMs);

  await sleep(leadMs);
  let trigger = 'timer';
  // The workers the cuts name (partition-one-worker: worker-0); the mid-transaction trigger
  // waits for one of them, or any worker when none is cut.
  const cutWorkers = cuts.flatMap((cut) => cut.victims).filter((victim) => cluster.workers.includes(victim));
  let openTransactions = 0;
  if (plan.midTransaction) {
    const deadline = Date.now() + 3_000;
    search: while (Date.now() < deadline) {
      for (const worker of cutWorkers.length > 0 ? cutWorkers : cluster.workers) {
        const sessions = await sessionsOf(ctx, worker).catch(() => []);
        if (sessions === undefined) break search;
        if (sessions.some(inInboxTransaction)) {
          trigger = `${worker.name} inside an inbox transaction`;
          break search;
        }
      }
      await sleep(5);
    }
  }
  let faults: PodFault[] = [];
  const outputBefore = new Map(cluster.processes().map((process) => [process, process.output.length]));
  // Workers first: an inbox transaction lasts milliseconds, each rule takes a few to install.
  const ordered = cuts.flatMap((cut) => cut.victims.map((victim) => ({ victim, peers: cut.peers })));
  ordered.sort((a, b) => Number(cluster.workers.includes(b.victim)) - Number(cluster.workers.includes(a.victim)));
  /** The cut workers' sessions Postgres still shows inside a transaction (not through PgBouncer: ports end there). */
  const openNow = async () => {
    let open = 0;
    for (const worker of cutWorkers) {
      const sessions = await sessionsOf(ctx, worker).catch(() => undefined);
      if (sessions) open += sessions.filter((session) => session.inTransaction).length;
    }
    return open;
  };
  const canSeeSessions = !cluster.pgbouncer && cutWorkers.length > 0;
  let cutAt = Date.now();
  let healAt = cutAt;
  let backlog = '';
  let tries = 0;
  try {
    // With `midTransaction`, a cut that froze no transaction is healed at once (the links were
    // down ~50 ms: TCP retransmits) and tried again, up to 20 times.
    for (;;) {
      tries += 1;
      cutAt = Date.now();
      faults = ordered.map(({ victim, peers }) => podOf(victim).cut(peers));
      await sleep(50);
      openTransactions = canSeeSessions ? await openNow() : 0;
      if (!plan.midTransaction || !canSeeSessions || openTransactions > 0 || tries >= 20) break;
      for (const fault of faults) fault.heal();
      await sleep(200);
    }
    await sleep(Math.max(0, cutMs - (Date.now() - cutAt)));
    backlog = await inFlight(ctx);
  } finally {
    for (const fault of faults) fault.heal();
    healAt = Date.now();
  }
  ctx.faults.push(`${plan.what} cut for ${((healAt - cutAt) / 1_000).toFixed(1)} s (silent drop), then healed`);

  const pending = await drained(ctx, deliveries, drainBoundMs);
  const drainMs = Date.now() - healAt;
  if (pending.length > 0) {
    ctx.violations.push({
      invariant: 'backlog drains after healing',
      detail: `not drained ${drainBoundMs} ms after healing: ${pending.join(', ')}`,
    });
  }
  await deliveries;
  const during = answersBetween(ctx, cutAt, healAt);
  for (const timing of during.slow.slice(0, 5)) {
    ctx.violations.push({
      invariant: 'prompt answers during a partition',
      detail: `a delivery started ${timing.startedAt - cutAt} ms into the cut ${
        timing.status === 0
          ? `had no answer after ${timing.ms} ms`
          : `was answered ${timing.status} after ${timing.ms} ms`
      } (bound ${promptAnswerMs} ms, provider timeout ${providerTimeoutMs} ms)`,
    });
  }
  if (during.slow.length > 5) {
    ctx.violations.push({
      invariant: 'prompt answers during a partition',
      detail: `${during.slow.length} slow in all`,
    });
  }
  const restarted = cluster
    .processes()
    .filter((process) => process.restarts !== restartsBefore.get(process))
    .map((process) => process.name);
  if (restarted.length > 0) {
    ctx.violations.push({ invariant: 'no process restarted', detail: `restarted: ${restarted.join(', ')}` });
  }
  ctx.notes.push(
    `cut ${plan.what} (trigger: ${trigger}; the cut workers' sessions inside a transaction just after the cut: ${openTransactions}${
      tries > 1 ? `, after ${tries} tries` : ''
    }) for ${healAt - cutAt} ms; ${during.count} deliveries started during it: ${JSON.stringify(
      during.statuses,
    )}, slowest answer ${during.maxMs} ms`,
    `backlog at the heal: ${backlog}; drained ${drainMs} ms after healing (bound ${drainBoundMs} ms)`,
    `what the processes logged meanwhile: ${JSON.stringify(warningsSince(cluster, outputBefore))}`,
  );
}

const plans: PartitionPlan[] = [
  {
    name: 'partition-workers-postgres',
    cuts: [{ victims: (cluster) => cluster.workers, peers: (cluster) => [services(cluster).postgres] }],
    midTransaction: true,
    what: 'every worker ↔ Postgres',
  },
  {
    name: 'partition-workers-redis',
    cuts: [{ victims: (cluster) => cluster.workers, peers: (cluster) => [services(cluster).redis] }],
    what: 'every worker ↔ Redis',
  },
  {
    name: 'partition-ingest-redis',
    cuts: [{ victims: (cluster) => cluster.ingests, peers: (cluster) => [services(cluster).redis] }],
    what: 'every ingest ↔ Redis',
  },
  {
    name: 'partition-ingest-postgres',
    cuts: [{ victims: (cluster) => cluster.ingests, peers: (cluster) => [services(cluster).postgres] }],
    what: 'every ingest ↔ Postgres',
  },
  {
    name: 'partition-one-worker',
    cuts: [{ victims: (cluster) => cluster.workers.slice(0, 1), peers: () => ['everything'] }],
    midTransaction: true,
    what: 'worker-0 ↔ everything',
  },
];

/**
 * The short profile's (CI's) one partition, 12 s: every worker ↔ Postgres (mid-transaction),
 * ingest-0 ↔ Postgres and ingest-1 ↔ Redis at once.
 */
const shortPartition: ProfiledScenario = {
  name: 'partitions',
  profiles: ['short'],
  run: (ctx) =>
    runPartition(
      ctx,
      {
        name: 'partitions',
        cuts: [
          { victims: (cluster) => cluster.workers, peers: (cluster) => [services(cluster).postgres] },
          { victims: (cluster) => cluster.ingests.slice(0, 1), peers: (cluster) => [services(cluster).postgres] },
          { victims: (cluster) => cluster.ingests.slice(1, 2), peers: (cluster) => [services(cluster).redis] },
        ],
        midTransaction: true,
        what: 'every worker ↔ Postgres, ingest-0 ↔ Postgres and ingest-1 ↔ Redis',
      },
      12_000,
    ),
};

/** The full profile: each partition 30 s. */
const fullPartitions: ProfiledScenario[] = plans.map((plan) => ({
  name: plan.name,
  profiles: ['full'],
  run: (ctx) => runPartition(ctx, plan, 30_000),
}));

/**
 * A rolling deploy during a partition: a worker cut off receives SIGTERM. First worker-0 is cut
 * from Postgres (its statements and connects hang), then worker-1 from Redis (its BullMQ
 * connections hang), each for a second with the stream flowing before the SIGTERM, the other
 * worker healthy. The cut worker must exit 0 within SHUTDOWN_TIMEOUT_MS (its own budget: the
 * consumers' drain, the loops' ticks and the pool's close all bounded inside it); the pod's link is
 * healed once it exited (a replaced pod gets a fresh network) and the supervisor starts it again.
 * The jobs it held are re-run by the other worker (BullMQ's stalled check, `rerunEvidence`), none
 * re-applied (no row ends `already_*`), nothing lost or doubled (the invariants).
 */
const partitionSigterm: ProfiledScenario = {
  name: 'partition-sigterm',
  async run(ctx) {
    const { cluster } = ctx;
    const [first, second] = cluster.workers;
    if (!first || !second) throw new Error('partition-sigterm needs two workers');
    podOf(first);
    podOf(second);
    const { postgres, redis } = services(cluster);
    const prefix = 'psigterm';
    const users = Array.from({ length: 6 }, (_, i) => `${prefix}-u${i}`);
    const streamMs = 16_000;
    const { events, expected } = purchaseStream(ctx.rng, prefix, users, Math.round((streamMs / 1_000) * 6));
    for (const [user, balance] of expected) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + balance);
    ctx.events.push(...events);
    const sinceMs = Date.now();
    const outputBefore = new Map(cluster.workers.map((worker) => [worker, worker.output.length]));
    const deliveries = ctx.sim.deliverAll(events, 8, streamMs);
    const phases = [
      { victim: first, peer: postgres, what: `${first.name} ↔ Postgres` },
      { victim: second, peer: redis, what: `${second.name} ↔ Redis` },
    ];
    for (const phase of phases) {
      await sleep(2_000);
      await phase.victim.ready();
      const before = phase.victim.output.length;
      const fault = podOf(phase.victim).cut([phase.peer]);
      let stop: Awaited<ReturnType<SupervisedProcess['terminate']>> | undefined;
      try {
        await sleep(1_000);
        stop = await phase.victim.terminate();
      } finally {
        fault.heal();
      }
      const logged = phase.victim.output
        .slice(before)
        .split('\n')
        .filter((line) => line.startsWith('{') && !line.includes('"level":30'))
        .map((line) => {
          try {
            const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
            return `${entry.msg}${entry.err?.message ? ` (${entry.err.message.slice(0, 80)})` : ''}`;
          } catch {
            return line.slice(0, 80);
          }
        });
      ctx.faults.push(`SIGTERM of a worker cut off (${phase.what})`);
      ctx.notes.push(
        `${phase.what}: SIGTERM 1 s into the cut, exit ${JSON.stringify(stop.exit)} after ${stop.ms} ms (budget ${shutdownTimeoutMs} ms); it logged ${JSON.stringify(
          [...new Set(logged)].slice(0, 8),
        )}`,
      );
      if (stop.exit.code !== 0 || stop.ms > shutdownTimeoutMs) {
        ctx.violations.push({
          invariant: 'a cut-off worker stops within its SIGTERM budget',
          detail: `${phase.what}: exit ${JSON.stringify(stop.exit)} after ${stop.ms} ms (SHUTDOWN_TIMEOUT_MS ${shutdownTimeoutMs})`,
        });
      }
    }
    await deliveries;
    const pending = await settle(cluster.db, drainBoundMs);
    if (pending.length > 0) {
      ctx.violations.push({
        invariant: 'backlog drains after the stops',
        detail: `not drained ${drainBoundMs} ms after the stream: ${pending.join(', ')}`,
      });
    }
    const evidence = await rerunEvidence(cluster, cluster.db, {
      sinceMs,
      outputBefore,
      eventIds: events.map((event) => event.id),
    });
    const { rows: outcomes } = await sql<{ outcome: string; count: number }>`
      SELECT status || '/' || coalesce(outcome_code, '-') AS outcome, count(*)::int AS count
        FROM inbox_events WHERE provider_event_id = ANY(${events.map((event) => event.id)}::text[])
       GROUP BY 1 ORDER BY 1`.execute(cluster.db);
    ctx.notes.push(
      `jobs the stopped workers held: ${evidence.stalledJobs} stalled and re-run by the other worker (${evidence.killedAfterCommit} had committed, ${evidence.killedBeforeCommit} applied by the re-run, ${evidence.unexplained} without a re-run line); ${evidence.rowsWithAttemptsOver1} rows run more than once (max attempts ${evidence.maxAttempts})`,
      `inbox outcomes: ${JSON.stringify(Object.fromEntries(outcomes.map((row) => [row.outcome, row.count])))}`,
    );
    const reapplied = outcomes.filter((row) => row.outcome.includes('/already'));
    if (reapplied.length > 0) {
      ctx.violations.push({
        invariant: "a stopped worker's jobs are re-run once",
        detail: `a re-run re-applied finished rows: ${JSON.stringify(reapplied)}`,
      });
    }
  },
};

export const partitionScenarios: ProfiledScenario[] = [shortPartition, partitionSigterm, ...fullPartitions];

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

interface LinkPhase {
  name: string;
  /** % of packets dropped at random each way between every process and Postgres and Redis. */
  lossPercent: number;
  /** A tbf rate on every process's veth (both ends), or none. */
  rate?: string;
  /** The drain must end within this; unset: measured only, up to `lossyMeasureMs`. */
  drainBoundMs?: number;
}

/**
 * Slow and lossy links for a whole run: phases of the same paced stream, first over clean links
 * (the baseline), then with N % of the packets between every process and Postgres and Redis
 * dropped at random (nft numgen), the last also limited by tbf. Per phase: the answers (all
 * prompt), the delivery latency, and how long after its last delivery the backlog drained,
 * against the clean phase's: the figures of how much slower it drains.
 */
const lossyLinks: ProfiledScenario = {
  name: 'lossy-links',
  profiles: ['full'],
  async run(ctx) {
    const { cluster } = ctx;
    const processes = cluster.processes();
    for (const process of processes) podOf(process);
    const { postgres, redis } = services(cluster);
    const phases: LinkPhase[] = [
      { name: 'clean', lossPercent: 0, drainBoundMs },
      { name: '5 % loss', lossPercent: 5, drainBoundMs: lossyDrainBoundMs },
      { name: '15 % loss', lossPercent: 15, drainBoundMs: lossyDrainBoundMs },
      { name: '30 % loss', lossPercent: 30 },
      { name: '1 mbit/s (tbf)', lossPercent: 0, rate: '1mbit', drainBoundMs },
    ];
    const phaseMs = size(ctx, 6_000, 12_000);
    const perPhase = Math.round((phaseMs / 1_000) * 6);
    const restartsBefore = restartsOf(cluster);
    const figures: string[] = [];
    let baselineDrainMs = 0;
    for (const [index, phase] of phases.entries()) {
      const faults: PodFault[] = [];
      try {
        for (const process of processes) {
          const pod = podOf(process);
          if (phase.lossPercent > 0) faults.push(pod.loss([postgres, redis], phase.lossPercent));
          if (phase.rate) faults.push(pod.bandwidth(phase.rate));
        }
        const prefix = `lossy${index}`;
        const users = Array.from({ length: 6 }, (_, i) => `${prefix}-u${i}`);
        const { events, expected } = purchaseStream(ctx.rng, prefix, users, perPhase);
        for (const [user, balance] of expected) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + balance);
        ctx.events.push(...events);
        const startedAt = Date.now();
        await ctx.sim.deliverAll(events, 8, phaseMs);
        const deliveredAt = Date.now();
        // The phase's own events drained (inbox rows and their app webhooks), links still faulty.
        const outputBefore = new Map(processes.map((process) => [process, process.output.length]));
        const pending = await settle(cluster.db, phase.drainBoundMs ?? lossyMeasureMs);
        const drainMs = Date.now() - deliveredAt;
        if (index === 0) baselineDrainMs = drainMs;
        if (pending.length > 0 && phase.drainBoundMs !== undefined) {
          ctx.violations.push({
            invariant: 'backlog drains on a lossy link',
            detail: `${phase.name}: not drained ${phase.drainBoundMs} ms after the last delivery: ${pending.join(', ')}`,
          });
        }
        const timings = ctx.sim.timings.filter(
          (timing) => timing.startedAt >= startedAt && timing.startedAt < deliveredAt,
        );
        const slow = timings.filter((timing) => timing.status === 0 || timing.ms > promptAnswerMs);
        if (slow.length > 0) {
          ctx.violations.push({
            invariant: 'prompt answers on a lossy link',
            detail: `${phase.name}: ${slow.length} answers missing or past ${promptAnswerMs} ms (slowest ${Math.max(
              ...slow.map((timing) => timing.ms),
            )} ms)`,
          });
        }
        const statuses: Record<string, number> = {};
        for (const timing of timings) statuses[timing.status] = (statuses[timing.status] ?? 0) + 1;
        const ms = timings.map((timing) => timing.ms);
        figures.push(
          `${phase.name}: ${events.length} events in ${timings.length} deliveries ${JSON.stringify(statuses)}, answer p50 ${percentile(
            ms,
            50,
          )} ms, p99 ${percentile(ms, 99)} ms; ${
            pending.length > 0
              ? `NOT drained ${drainMs} ms after the last delivery (${pending.join(', ')}; measured only, it drains once healed)`
              : `drained ${drainMs} ms after the last delivery`
          }${
            index > 0 && baselineDrainMs > 0 ? ` (${(drainMs / baselineDrainMs).toFixed(1)}× the clean phase's)` : ''
          }; logged meanwhile ${JSON.stringify(warningsSince(cluster, outputBefore))}`,
        );
      } finally {
        for (const fault of faults) fault.heal();
      }
      ctx.faults.push(
        phase.lossPercent === 0
          ? 'clean links (baseline)'
          : `${phase.lossPercent} % random loss to Postgres and Redis${phase.rate ? `, tbf ${phase.rate}` : ''}`,
      );
    }
    const restarted = processes.filter((process) => process.restarts !== restartsBefore.get(process));
    if (restarted.length > 0) {
      ctx.violations.push({
        invariant: 'no process restarted',
        detail: `restarted: ${restarted.map((process) => process.name).join(', ')}`,
      });
    }
    ctx.notes.push(...figures);
  },
};

partitionScenarios.push(lossyLinks);
