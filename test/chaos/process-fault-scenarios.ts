// Process-level faults against the real built processes: a worker frozen (SIGSTOP) past its
// BullMQ lock so two workers run the same jobs, and slow-loris clients against ingest.
import net from 'node:net';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Profile, Scenario, ScenarioContext } from './scenario';
import {
  chaosHttpHeadersTimeoutMs,
  chaosHttpRequestTimeoutMs,
  chaosRevenueCatAuth,
  chaosWorkerLockMs,
  type SupervisedProcess,
} from './support/chaos-cluster';
import { purchaseStream } from './support/events';
import { tcpPortsTo } from './support/proc-sockets';
import { type Provider, stripeSignature } from './support/provider-simulator';

/** A scenario that runs in the listed profiles only (every scenario still runs when named in CHAOS_SCENARIOS). */
export type ProfiledScenario = Scenario & { profiles?: Profile[] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

/** Paced token-pack purchases (events.ts's purchaseStream) over `durationMs`, the model updated. */
function pacedPurchases(
  ctx: ScenarioContext,
  prefix: string,
  users: number,
  count: number,
  durationMs: number,
  concurrency = 8,
): Promise<void> {
  const userIds = Array.from({ length: users }, (_, i) => `${prefix}-u${i}`);
  const { events, expected } = purchaseStream(ctx.rng, prefix, userIds, count);
  for (const [user, balance] of expected) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + balance);
  ctx.events.push(...events);
  return ctx.sim.deliverAll(events, concurrency, durationMs);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

// ---------------------------------------------------------------------------------------------
// paused-worker-lost-lock

interface Session {
  state: string | null;
  inTransaction: boolean;
  query: string;
}

/** The worker's Postgres sessions as pg_stat_activity shows them; undefined without /proc. */
export async function sessionsOf(ctx: ScenarioContext, worker: SupervisedProcess): Promise<Session[] | undefined> {
  const pid = worker.current?.pid;
  if (pid === undefined) return [];
  const ports = tcpPortsTo(pid, ctx.cluster.postgres.port);
  if (!ports) return undefined;
  if (ports.size === 0) return [];
  const { rows } = await sql<{ state: string | null; in_transaction: boolean; query: string }>`
    SELECT state, xact_start IS NOT NULL AS in_transaction, left(query, 100) AS query
      FROM pg_stat_activity WHERE client_port = ANY(${[...ports]}::int[])`.execute(ctx.cluster.db);
  return rows.map((row) => ({ state: row.state, inTransaction: row.in_transaction, query: row.query }));
}

/**
 * A session inside a transaction that is not one of the scheduled loops' (installments, studio
 * sweeper): in this scenario, processInboxEvents' (user/row lock, apply, mark finished).
 */
export const inInboxTransaction = (session: Session) =>
  session.inTransaction && !/stripe_installments|studio_requests/i.test(session.query);

/**
 * Polls until the worker has a session inside an inbox transaction (so the SIGSTOP that follows
 * most likely freezes it mid-transaction, holding the user's advisory lock and the row lock).
 */
async function waitForInboxTransaction(
  ctx: ScenarioContext,
  worker: SupervisedProcess,
  timeoutMs: number,
): Promise<'mid-transaction' | 'timer' | 'no /proc'> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const sessions = await sessionsOf(ctx, worker).catch(() => [] as Session[]);
    if (sessions === undefined) return 'no /proc';
    if (sessions.some(inInboxTransaction)) return 'mid-transaction';
    await sleep(5);
  }
  return 'timer';
}

/** BullMQ events of the inbox queue since `sinceMs` (its Redis stream), counted by name. */
async function inboxQueueEvents(ctx: ScenarioContext, sinceMs: number): Promise<Record<string, number>> {
  const redis = new Redis(ctx.cluster.redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const entries = await redis.xrange('chaos:inbox:events', String(sinceMs), '+');
    const counts: Record<string, number> = {};
    for (const [, fields] of entries) {
      const name = fields[fields.indexOf('event') + 1] ?? '?';
      counts[name] = (counts[name] ?? 0) + 1;
    }
    return counts;
  } finally {
    redis.disconnect();
  }
}

const pausedWorkerLostLock: ProfiledScenario = {
  name: 'paused-worker-lost-lock',
  async run(ctx) {
    // A worker is frozen (SIGSTOP) while it holds inbox jobs, if possible inside processInboxEvents'
    // transaction, and kept frozen well past its BullMQ lock (2 s) plus the stalled check (every
    // 2 s; a job is moved back to wait on the second check that finds its lock gone), so another
    // worker takes its jobs and runs them. Then SIGCONT: the frozen worker carries on with the
    // same jobs (commits its transaction or starts it, tries to finish jobs whose lock it lost).
    const pauses = size(ctx, 2, 5);
    const faults = ctx.rng.fork('pauses');
    const users = 8;
    const plan = Array.from({ length: pauses }, (_, index) => {
      // Just before each pause, a burst of purchases for two users: jobs of one user apply one at a
      // time (advisory lock), so both workers hold active jobs, some inside their transaction.
      const burstUsers = [`paused-u${faults.int(0, users - 1)}`, `paused-u${faults.int(0, users - 1)}`];
      return {
        victim: faults.pick(ctx.cluster.workers),
        gapMs: faults.int(500, 1_500),
        pauseMs: faults.int(chaosWorkerLockMs * 3.5, chaosWorkerLockMs * 4.5),
        burst: purchaseStream(faults, `paused-burst${index}`, burstUsers, faults.int(8, 16)),
      };
    });
    const started = Date.now();
    const outputBefore = new Map(ctx.cluster.workers.map((worker) => [worker, worker.output.length]));
    const streamMs = plan.reduce((sum, step) => sum + step.gapMs + step.pauseMs + 1_000, 0);
    const work = pacedPurchases(ctx, 'paused', users, size(ctx, 60, 250), streamMs);
    const bursts: Promise<void>[] = [];
    let midTransaction = 0;
    let done = 0;
    try {
      for (const [index, step] of plan.entries()) {
        await sleep(step.gapMs);
        const { victim, burst } = step;
        await victim.ready();
        for (const [user, balance] of burst.expected) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + balance);
        ctx.events.push(...burst.events);
        bursts.push(ctx.sim.deliverAll(burst.events, burst.events.length));
        const trigger = await waitForInboxTransaction(ctx, victim, 3_000);
        victim.pause();
        done += 1;
        const pausedAt = Date.now();
        // What the frozen worker holds (its sessions stay as they were when it stopped).
        await sleep(100);
        const frozen = (await sessionsOf(ctx, victim).catch(() => undefined)) ?? [];
        const open = frozen.filter((session) => session.inTransaction);
        if (open.some(inInboxTransaction)) midTransaction += 1;
        const { rows } = await sql<{ count: number }>`
          SELECT count(*)::int AS count FROM inbox_events WHERE status = 'processing'`.execute(ctx.cluster.db);
        await sleep(Math.max(0, step.pauseMs - (Date.now() - pausedAt)));
        victim.resume();
        ctx.notes.push(
          `pause ${index + 1}: ${victim.name} stopped ${Date.now() - pausedAt} ms after a burst of ${
            burst.events.length
          } (trigger: ${trigger}); frozen with ${open.length} open transaction(s)${
            open.length > 0
              ? ` [${open.map((s) => `${s.state}: ${s.query.replace(/\s+/g, ' ').slice(0, 50)}`).join(' | ')}]`
              : ''
          }; ${rows[0]?.count ?? 0} inbox rows processing`,
        );
      }
    } finally {
      for (const worker of ctx.cluster.workers) worker.resume();
    }
    await Promise.all([work, ...bursts]);
    const pauseMs = plan.map((step) => step.pauseMs);
    ctx.faults.push(
      `SIGSTOP of a worker for ${Math.min(...pauseMs)}–${Math.max(...pauseMs)} ms, then SIGCONT ×${done}`,
    );

    // Evidence that two workers really ran the same jobs, once the inbox has settled.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const { rows } = await sql<{ count: number }>`
        SELECT count(*)::int AS count FROM inbox_events WHERE status IN ('received', 'processing')`.execute(
        ctx.cluster.db,
      );
      if ((rows[0]?.count ?? 0) === 0) break;
      await sleep(250);
    }
    const ids = ctx.events.map((event) => event.id);
    const { rows: reruns } = await sql<{ count: number; max: number | null }>`
      SELECT count(*) FILTER (WHERE attempts > 1)::int AS count, max(attempts)::int AS max
        FROM inbox_events WHERE provider_event_id = ANY(${ids}::text[])`.execute(ctx.cluster.db);
    const { rows: outcomes } = await sql<{ outcome: string; count: number }>`
      SELECT status || '/' || coalesce(outcome_code, '-') AS outcome, count(*)::int AS count
        FROM inbox_events WHERE provider_event_id = ANY(${ids}::text[]) GROUP BY 1 ORDER BY 1`.execute(ctx.cluster.db);
    const queueEvents = await inboxQueueEvents(ctx, started).catch((error) => ({ unreadable: String(error) }));
    const lines = ctx.cluster.workers
      .flatMap((worker) => worker.output.slice(outputBefore.get(worker) ?? 0).split('\n'))
      .flatMap((line) => {
        try {
          return line.startsWith('{')
            ? [JSON.parse(line) as { msg?: string; err?: { message?: string }; error?: string }]
            : [];
        } catch {
          return [];
        }
      });
    const workerErrors: Record<string, number> = {};
    for (const line of lines) {
      if (line.msg !== 'inbox worker error') continue;
      // "Missing lock for job 12. moveToFinished" → "Missing lock for job N. moveToFinished"
      const message = (line.err?.message ?? '?').replace(/\d+/g, 'N').slice(0, 120);
      workerErrors[message] = (workerErrors[message] ?? 0) + 1;
    }
    const failures: Record<string, number> = {};
    for (const line of lines) {
      if (line.msg !== 'inbox event failed; will retry' && line.msg !== 'inbox event parked') continue;
      const message = `${line.msg}: ${(line.error ?? '?').replace(/\d+/g, 'N').slice(0, 120)}`;
      failures[message] = (failures[message] ?? 0) + 1;
    }
    const alreadyFinished = lines.filter((line) => line.msg === 'inbox event already finished; nothing to do').length;
    ctx.notes.push(
      `pauses that froze the worker inside a transaction: ${midTransaction}/${done}`,
      `inbox rows run more than once (attempts > 1): ${reruns[0]?.count ?? 0} (max attempts ${reruns[0]?.max ?? 0})`,
      `inbox outcomes: ${JSON.stringify(Object.fromEntries(outcomes.map((row) => [row.outcome, row.count])))}`,
      `BullMQ inbox queue events during the scenario: ${JSON.stringify(queueEvents)}`,
      `runs that found their row already finished (the other worker's run won): ${alreadyFinished}`,
      `inbox worker errors (the resumed worker's lost locks): ${JSON.stringify(workerErrors)}`,
      `failed runs: ${JSON.stringify(failures)}`,
    );
    // Every event here is a distinct purchase: an `already_*` outcome means a second run of the same
    // event got as far as applying it (only its ledger reference stopped a double credit) and then
    // overwrote the first run's outcome. The status re-check under the row lock must stop it first.
    const reapplied = outcomes.filter((row) => row.outcome.includes('/already'));
    if (reapplied.length > 0) {
      throw new Error(`a second run re-applied finished rows: ${JSON.stringify(reapplied)}`);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// slow-loris

type SlowKind = 'silent' | 'header-drip' | 'body-drip' | 'chunked-drip' | 'oversized-drip';
const slowKinds: SlowKind[] = ['silent', 'header-drip', 'body-drip', 'chunked-drip', 'oversized-drip'];
/** Kinds that never finish their headers: Node's headers timeout applies; the others send full headers. */
const headerKinds = new Set<SlowKind>(['silent', 'header-drip']);

interface SlowSocket {
  kind: SlowKind;
  ingest: string;
  socket: net.Socket;
  openedAt: number;
  closedAt?: number;
  /** The status line the server answered, if any. */
  answer?: string;
  /** Set when the suite had to close it (the server never did). */
  closedByUs: boolean;
  drip: string;
  dripped: number;
}

function openSlowSocket(kind: SlowKind, ingest: SupervisedProcess, provider: Provider): SlowSocket {
  const socket = net.connect(ingest.port, ingest.host);
  const slow: SlowSocket = {
    kind,
    ingest: ingest.name,
    socket,
    openedAt: Date.now(),
    closedByUs: false,
    drip: '',
    dripped: 0,
  };
  let received = '';
  // Always read: a socket whose data nobody reads never reports the server's close.
  socket.on('data', (chunk) => {
    if (slow.answer !== undefined) return;
    received += chunk.toString('latin1');
    if (received.includes('\r\n')) slow.answer = received.split('\r\n')[0];
  });
  socket.on('error', () => undefined);
  socket.once('close', () => {
    slow.closedAt = Date.now();
    if (slow.answer === undefined && received.length > 0) slow.answer = received.split('\r\n')[0];
  });
  const auth =
    provider === 'stripe'
      ? `Stripe-Signature: ${stripeSignature('{"never":"finished"}')}`
      : `Authorization: ${chaosRevenueCatAuth}`;
  const head = (length: string) =>
    [`POST /webhooks/${provider} HTTP/1.1`, 'Host: 127.0.0.1', auth, 'Content-Type: application/json', length, '', '']
      .join('\r\n')
      .concat('{');
  // openedAt stays the moment of connect(): with hundreds of sockets opened at once our own
  // 'connect' callbacks run late, and the server counts from its accept, which is earlier.
  socket.once('connect', () => {
    switch (kind) {
      case 'silent':
        return;
      case 'header-drip':
        socket.write(`POST /webhooks/${provider} HTTP/1.1\r\n`);
        slow.drip = 'X-Drip: a\r\n';
        return;
      case 'body-drip':
        socket.write(head('Content-Length: 900000'));
        slow.drip = ' ';
        return;
      case 'chunked-drip':
        socket.write(head('Transfer-Encoding: chunked').slice(0, -1));
        slow.drip = '1\r\n \r\n';
        return;
      case 'oversized-drip':
        socket.write(head('Content-Length: 52428800'));
        slow.drip = ' ';
        return;
    }
  });
  return slow;
}

/** One more piece of each open dripping socket: a byte of header or body, or a one-byte chunk. */
function dripOnce(sockets: SlowSocket[]): void {
  for (const slow of sockets) {
    if (!slow.drip || slow.closedAt !== undefined || slow.socket.destroyed || slow.socket.connecting) continue;
    const piece = slow.kind === 'chunked-drip' ? slow.drip : (slow.drip[slow.dripped % slow.drip.length] ?? slow.drip);
    slow.dripped += 1;
    slow.socket.write(piece);
  }
}

const slowLoris: ProfiledScenario = {
  name: 'slow-loris',
  async run(ctx) {
    // Hundreds of slow clients against the ingest processes (never-finished headers, a byte a
    // second, bodies that never arrive under a big Content-Length or as endless one-byte chunks)
    // while the providers' signed deliveries go on. The server's own timeouts must close every
    // slow socket; every real delivery must be answered 200 meanwhile.
    // startHttpServer sweeps connections every quarter of the headers timeout (250 ms–5 s).
    const sweepMs = Math.min(5_000, Math.max(250, Math.floor(chaosHttpHeadersTimeoutMs / 4)));
    const slackMs = 2_000;
    const limitMs = (kind: SlowKind) =>
      (headerKinds.has(kind) ? chaosHttpHeadersTimeoutMs : chaosHttpRequestTimeoutMs) + sweepMs + slackMs;

    // A baseline of normal deliveries first, for comparison.
    await pacedPurchases(ctx, 'loris-base', 4, 20, 2_000, 4);
    const baselineEnd = Date.now();

    const count = size(ctx, 240, 1_000);
    const sockets: SlowSocket[] = [];
    for (let n = 0; n < count; n += 1) {
      const kind = slowKinds[n % slowKinds.length] as SlowKind;
      sockets.push(
        openSlowSocket(kind, ctx.rng.pick(ctx.cluster.ingests), ctx.rng.chance(0.5) ? 'stripe' : 'revenuecat'),
      );
    }
    const attackStart = Date.now();
    ctx.faults.push(`${count} slow-loris sockets`);
    const dripper = setInterval(() => dripOnce(sockets), 1_000);
    const hardDeadline = attackStart + chaosHttpRequestTimeoutMs + 15_000;
    let attackEnd = 0;
    try {
      const work = pacedPurchases(ctx, 'loris', 6, size(ctx, 60, 250), chaosHttpRequestTimeoutMs, 8);
      while (Date.now() < hardDeadline && sockets.some((slow) => slow.closedAt === undefined)) await sleep(100);
      attackEnd = Date.now();
      await work;
    } finally {
      clearInterval(dripper);
      for (const slow of sockets) {
        if (slow.closedAt !== undefined) continue;
        slow.closedByUs = true;
        slow.socket.destroy();
      }
    }

    // How long each kind lived, and what the server answered.
    const problems: string[] = [];
    for (const kind of slowKinds) {
      const ofKind = sockets.filter((slow) => slow.kind === kind);
      const lifetimes = ofKind.map((slow) => (slow.closedAt ?? Date.now()) - slow.openedAt);
      const answers: Record<string, number> = {};
      for (const slow of ofKind) {
        const answer = slow.closedByUs ? 'still open' : (slow.answer ?? 'closed without an answer');
        answers[answer] = (answers[answer] ?? 0) + 1;
      }
      const tooLong = ofKind.filter((slow) => slow.closedByUs || (slow.closedAt ?? 0) - slow.openedAt > limitMs(kind));
      ctx.notes.push(
        `${kind} ×${ofKind.length}: lived ${percentile(lifetimes, 0)}–${percentile(lifetimes, 100)} ms (median ${percentile(
          lifetimes,
          50,
        )}; limit ${limitMs(kind)}); answers ${JSON.stringify(answers)}`,
      );
      if (tooLong.length > 0) {
        problems.push(`${tooLong.length} ${kind} sockets lived past ${limitMs(kind)} ms`);
      }
    }

    const baseline = ctx.sim.timings.filter((t) => t.startedAt < baselineEnd).map((t) => t.ms);
    const during = ctx.sim.timings.filter((t) => t.startedAt >= attackStart && t.startedAt <= attackEnd);
    const latencies = during.map((t) => t.ms);
    ctx.notes.push(
      `delivery latency before the attack: p50 ${percentile(baseline, 50)} ms, p99 ${percentile(baseline, 99)} ms (${baseline.length} POSTs)`,
      `delivery latency during the attack: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(
        latencies,
        99,
      )} ms, max ${percentile(latencies, 100)} ms (${latencies.length} POSTs over ${attackEnd - attackStart} ms)`,
    );
    const refused = ctx.sim.timings.filter((t) => t.status !== 200);
    if (refused.length > 0) {
      const statuses = [...new Set(refused.map((t) => t.status))].join(', ');
      problems.push(`${refused.length} deliveries were not answered 200 (${statuses})`);
    }
    if (problems.length > 0) throw new Error(problems.join('; '));
  },
};

/** Appended to the scenario list by chaos.chaos.ts. */
export const processFaultScenarios: ProfiledScenario[] = [pausedWorkerLostLock, slowLoris];
