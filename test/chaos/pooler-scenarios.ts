// The pooler and the database behind it: PgBouncer killed and restarted under load, and a
// Postgres failover to a synchronous standby (the primary killed, the standby promoted, PgBouncer
// pointed at it). Both run where the services reach Postgres through PgBouncer (`needs`).
import { sql } from 'kysely';
import type { Scenario, ScenarioContext } from './scenario';
import { stream, whileRunning } from './scenarios';
import { settle } from './support/invariants';
import { planStudioRequest, StudioModel } from './support/studio-model';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

/** Each process's restart count now, to prove a fault needed none. */
function restartCounts(ctx: ScenarioContext): Map<string, number> {
  return new Map(ctx.cluster.processes().map((process) => [process.name, process.restarts]));
}

/** A violation for every process restarted since `before` (each must carry on by itself). */
function checkNoRestarts(ctx: ScenarioContext, before: Map<string, number>): void {
  const restarted = ctx.cluster
    .processes()
    .filter((process) => process.restarts !== (before.get(process.name) ?? 0))
    .map((process) => `${process.name} ×${process.restarts - (before.get(process.name) ?? 0)}`);
  if (restarted.length > 0) {
    ctx.violations.push({ invariant: 'every process carries on without a restart', detail: restarted.join(', ') });
  }
}

/** Free-tier generations of `users` spread over `durationMs` (answered at once, slowly or with a 500). */
function studioLoad(ctx: ScenarioContext, prefix: string, users: number, durationMs: number) {
  const plan = ctx.rng.fork('studio');
  const ids = Array.from({ length: users }, (_, i) => `${prefix}-studio-u${i}`);
  const requests = ids.flatMap((user) =>
    Array.from({ length: 5 }, (_, n) =>
      planStudioRequest(plan, user, `${user}-n${n}`, Math.floor(((n + plan.next()) * durationMs) / 5), [
        'succeed',
        'slow',
        'fail',
      ]),
    ),
  );
  const model = new StudioModel(ctx.cluster);
  return { ids, model, work: model.sendAll(requests) };
}

async function checkStudio(ctx: ScenarioContext, studio: ReturnType<typeof studioLoad>): Promise<void> {
  await studio.model.waitForSettled();
  const { spent, violations, notes } = await studio.model.check();
  for (const user of studio.ids) ctx.expected.set(user, -(spent.get(user) ?? 0));
  ctx.violations.push(...violations);
  ctx.notes.push(...notes);
}

const pgBouncerRestart: Scenario = {
  name: 'pgbouncer-restart',
  needs: 'pooler',
  async run(ctx) {
    // PgBouncer (every service's DATABASE_URL) is kill -9ed and started again on its port, 0.3–1.5 s
    // later, while webhooks stream in and users send generations: every client connection and
    // every transaction in flight is cut at once, new ones are refused until it is back.
    const bouncer = ctx.cluster.pgbouncer;
    if (!bouncer) throw new Error('no PgBouncer in this cluster');
    const before = restartCounts(ctx);
    const durationMs = size(ctx, 8_000, 45_000);
    const work = stream(ctx, 'pgbouncer', 6, size(ctx, 60, 300));
    const studio = studioLoad(ctx, 'pgbouncer', size(ctx, 2, 6), durationMs);
    const downs: number[] = [];
    const restarts = await whileRunning(
      Promise.all([work, studio.work]),
      async () => {
        const downMs = ctx.rng.int(300, 1_500);
        downs.push(downMs);
        // Between AI answers, as in postgres-failover.
        await studio.model.aroundFault(() => bouncer.restart(downMs));
      },
      () => ctx.rng.int(800, 2_000),
      size(ctx, 3, 10),
    );
    ctx.faults.push(`PgBouncer kill -9, restarted on its port ×${restarts}`, 'studio requests in flight');
    ctx.notes.push(`PgBouncer down ${downs.join(', ')} ms`);
    await checkStudio(ctx, studio);
    await settle(ctx.cluster.db, 60_000);
    checkNoRestarts(ctx, before);
  },
};

const postgresFailover: Scenario = {
  name: 'postgres-failover',
  needs: 'standby',
  async run(ctx) {
    // A primary with a synchronous standby (synchronous_standby_names = '*', synchronous_commit =
    // on) under webhooks and generations. Replication stalls first (the primary's WAL sender is
    // SIGSTOPped 0.8–1.5 s: the standby receives nothing, commits wait for it), then the primary
    // is SIGKILLed with everything it started, the standby promoted and PgBouncer pointed at it
    // (RELOAD). No process is touched: each must find the new primary through PgBouncer.
    const cluster = ctx.cluster;
    const before = restartCounts(ctx);
    const durationMs = size(ctx, 8_000, 30_000);
    const work = stream(ctx, 'failover', 6, size(ctx, 80, 300));
    const studio = studioLoad(ctx, 'failover', size(ctx, 2, 6), durationMs);
    await sleep(ctx.rng.int(Math.floor(durationMs * 0.25), Math.floor(durationMs * 0.4)));
    const senders = await cluster.walSenderPids();
    if (senders.length === 0) throw new Error('no WAL sender: the standby is not streaming');
    const stallMs = ctx.rng.int(800, 1_500);
    let acceptedDuringStall = 0;
    let killedAt = 0;
    let promotedMs = 0;
    let repointedMs = 0;
    // Between AI answers (StudioModel.aroundFault): a generation whose answer came just before
    // the kill would otherwise fail for want of its commit, which the studio model cannot know.
    await studio.model.aroundFault(async () => {
      const stalledAt = Date.now();
      for (const pid of senders) process.kill(pid, 'SIGSTOP');
      await sleep(stallMs);
      // Sent and acknowledged while the standby received nothing: with a synchronous standby,
      // none (a request sent before the stall may have committed before it and be answered during it).
      acceptedDuringStall = ctx.sim.timings.filter(
        (t) => t.status === 200 && t.startedAt >= stalledAt && t.startedAt + t.ms <= Date.now(),
      ).length;
      killedAt = Date.now();
      ({ promotedMs } = await cluster.failover());
      repointedMs = Date.now() - killedAt;
    });
    ctx.faults.push(
      `replication stalled ${stallMs} ms`,
      'primary SIGKILLed, standby promoted, PgBouncer repointed',
      'studio requests in flight',
    );
    await Promise.all([work, studio.work]);
    const recovered = ctx.sim.timings.filter((t) => t.startedAt >= killedAt && t.status === 200);
    const firstAfter = recovered.length > 0 ? Math.min(...recovered.map((t) => t.startedAt + t.ms)) - killedAt : NaN;
    const { rows } = await sql<{ recovery: boolean; timeline: string }>`
      SELECT pg_is_in_recovery() AS recovery, substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS timeline`.execute(
      cluster.db,
    );
    const answers = ctx.sim.timings.filter((t) => t.startedAt >= killedAt - stallMs && t.status !== 200);
    const statuses: Record<string, number> = {};
    for (const t of answers) statuses[t.status] = (statuses[t.status] ?? 0) + 1;
    ctx.notes.push(
      `${senders.length} WAL sender(s) frozen ${stallMs} ms before the kill; ${acceptedDuringStall} webhooks sent and answered 200 meanwhile (a synchronous standby lets no commit through)`,
      `standby promoted in ${promotedMs} ms, PgBouncer repointed ${repointedMs} ms after the kill; first 200 after the kill ${firstAfter} ms after it`,
      `non-200 answers from the stall on: ${JSON.stringify(statuses)}`,
      `new primary: in recovery ${rows[0]?.recovery}, timeline ${rows[0]?.timeline}`,
    );
    if (rows[0]?.recovery !== false) throw new Error('the promoted standby is still in recovery');
    await checkStudio(ctx, studio);
    await settle(cluster.db, 60_000);
    checkNoRestarts(ctx, before);
  },
};

/** Appended to the scenario list by chaos.chaos.ts (last: the failover uses up the standby). */
export const poolerScenarios: Scenario[] = [pgBouncerRestart, postgresFailover];
