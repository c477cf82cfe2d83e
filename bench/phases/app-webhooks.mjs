// App webhooks (docs/app-webhooks.md): the drain with APP_WEBHOOK_URL set on Tally's worker,
// against the same drain without it and the bare BullMQ worker on the same backlog, in rotated
// rounds; then the delivery of the messages the drain wrote, to a local receiver that verifies
// each with the Standard Webhooks library. Returns its rounds and figures.
//
// With the URL set, the worker hands each transaction's messages to the app-webhooks queue right
// after its commit (a Redis add behind the job). The messages themselves are written either way:
// the outbox rows are part of the ledger insert (CTEs of one statement), so the drain's
// statements per event are the same with and without the URL. Delivery is measured after the
// drain, by a worker running the `app-webhooks` role alone (on this 2-core box a delivering
// process running alongside would measure the machine, not the inbox path); the messages are
// already in the queue from the hand-offs.
import { rotated } from '../context.mjs';
import { newWebhookSecret, startAppWebhookReceiver } from '../lib/app-webhook-receiver.mjs';
import { median, round } from '../lib/stats.mjs';
import { bullmq, Redis } from '../lib/workspace.mjs';
import { bareDrain, tallyDrain } from './drain.mjs';

async function waitingJobs(redisUrl, prefix) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  connection.on('error', () => undefined);
  const queue = new bullmq.Queue('app-webhooks', { connection, prefix });
  try {
    return (await queue.getJobCounts('waiting')).waiting;
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/**
 * Delivers what a drain wrote: one worker process with WORKER_ROLES=app-webhooks (default
 * APP_WEBHOOK_CONCURRENCY) takes the handed-off jobs; messages/s from the first to the last
 * delivered_at (database clock), its CPU per message, and what the receiver saw.
 */
async function deliverBacklog(ctx, { databaseUrl, prefix, pool }, receiver, secret) {
  const { log, checkpoint } = ctx;
  const written = (
    await pool.query(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE enqueued_at IS NOT NULL AND status = 'pending')::int AS stamped FROM app_webhook_messages",
    )
  ).rows[0];
  const queued = await waitingJobs(ctx.redisUrl, prefix);
  await checkpoint(pool);
  const handle = ctx.startTallyWorker(databaseUrl, prefix, 'tally-app-webhooks', {
    WORKER_ROLES: 'app-webhooks',
    APP_WEBHOOK_URL: receiver.url,
    APP_WEBHOOK_SECRETS: secret,
  });
  const deadline = Date.now() + Math.max(120_000, written.n * 100);
  for (;;) {
    const { delivered } = (
      await pool.query("SELECT count(*)::int AS delivered FROM app_webhook_messages WHERE status = 'delivered'")
    ).rows[0];
    if (delivered >= written.n) break;
    if (Date.now() > deadline) throw new Error(`app webhook delivery: only ${delivered} of ${written.n} in time`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const cpuSeconds = handle.cpuSeconds();
  await handle.stop();
  const { rows } = await pool.query(
    'SELECT count(*)::int AS n, extract(epoch FROM max(delivered_at) - min(delivered_at))::float8 AS seconds FROM app_webhook_messages',
  );
  const { n, seconds } = rows[0];
  const figures = {
    messages: n,
    handedOffAtCommit: queued === written.n && written.stamped === written.n,
    queuedJobs: queued,
    messagesPerSecond: seconds > 0 ? (n - 1) / seconds : Number.NaN,
    workerCpuMsPerMessage: round((cpuSeconds * 1000) / n, 3),
    received: receiver.state.received,
    duplicates: receiver.state.duplicates,
    rejected: receiver.state.rejected,
    inPerUserOrder: receiver.inPerUserOrder(),
    users: receiver.users(),
  };
  log(
    `app webhooks: ${n} messages of ${figures.users} users delivered at ${round(figures.messagesPerSecond)}/s (worker ${figures.workerCpuMsPerMessage} ms CPU each); ${queued} jobs were queued at commit; received ${figures.received}, duplicates ${figures.duplicates}, rejected ${figures.rejected}, per-user order ${figures.inPerUserOrder}`,
  );
  return figures;
}

export async function appWebhooksPhase(ctx) {
  const { settings } = ctx;
  const size = { events: settings.appWebhookEvents, users: settings.appWebhookUsers };
  const rounds = { appWebhooksOff: [], appWebhooksOn: [], appWebhooksBare: [] };
  for (let pass = 0; pass < settings.appWebhookRounds; pass += 1) {
    for (const target of rotated(['off', 'on', 'bare'], pass)) {
      if (target === 'off') {
        rounds.appWebhooksOff.push(await tallyDrain(ctx, `awh-off-${pass}`, 1, 'stripe', size));
      } else if (target === 'bare') {
        rounds.appWebhooksBare.push((await bareDrain(ctx, `awh-bare-${pass}`, 1, { ...size, pgbench: false })).bare);
      } else {
        const secret = newWebhookSecret();
        const receiver = await startAppWebhookReceiver(secret);
        try {
          rounds.appWebhooksOn.push(
            await tallyDrain(ctx, `awh-on-${pass}`, 1, 'stripe', {
              ...size,
              workerEnv: { APP_WEBHOOK_URL: receiver.url, APP_WEBHOOK_SECRETS: secret },
              afterDrain: (drained) => deliverBacklog(ctx, drained, receiver, secret),
            }),
          );
        } finally {
          await receiver.close();
        }
      }
    }
  }
  const m = (list, key) => median(list.map((entry) => entry[key]));
  const side = (key) => ({ off: m(rounds.appWebhooksOff, key), on: m(rounds.appWebhooksOn, key) });
  const deliveries = rounds.appWebhooksOn.map((entry) => entry.afterDrain);
  const figures = {
    events: size.events,
    users: size.users,
    offEventsPerSecond: m(rounds.appWebhooksOff, 'eventsPerSecond'),
    onEventsPerSecond: m(rounds.appWebhooksOn, 'eventsPerSecond'),
    bareEventsPerSecond: m(rounds.appWebhooksBare, 'eventsPerSecond'),
    // Where an on drain's extra time would go, per event (medians): the hand-off is a Redis add
    // from the worker; the Postgres side must not move (the same statements either way).
    workerCpuMsPerEvent: side('workerCpuMsPerEvent'),
    postgresCpuMsPerEvent: side('postgresCpuMsPerEvent'),
    redisCpuMsPerEvent: side('redisCpuMsPerEvent'),
    statementsPerEvent: side('statementsPerEvent'),
    walBytesPerEvent: side('walBytesPerEvent'),
    deliveryMessagesPerSecond: median(deliveries.map((entry) => entry.messagesPerSecond)),
    deliveryWorkerCpuMsPerMessage: median(deliveries.map((entry) => entry.workerCpuMsPerMessage)),
    // Every round: each message handed off at its commit, delivered once, verified, in per-user order.
    deliveredOnceInOrder: deliveries.every(
      (entry) =>
        entry.handedOffAtCommit &&
        entry.received === entry.messages &&
        entry.duplicates === 0 &&
        entry.rejected === 0 &&
        entry.inPerUserOrder,
    ),
    allCredited: [...rounds.appWebhooksOff, ...rounds.appWebhooksOn].every(
      (entry) => entry.notProcessed === 0 && entry.ledgerRows === entry.events,
    ),
  };
  return { rounds: { appWebhooks: rounds }, figures };
}
