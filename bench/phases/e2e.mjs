// End to end: ingest + one worker at a fixed rate (open loop), Tally against the bare INSERT+add
// endpoint + bare worker, measured from inbox received_at to ledger created_at (Postgres clock).
// Returns its rounds and figures.

import { openLoopRequests, rotated } from '../context.mjs';
import { runOpenLoop } from '../lib/open-loop.mjs';
import { benchPool } from '../lib/resources.mjs';
import { median, round } from '../lib/stats.mjs';

async function endToEndLatency(runId, pool, tag) {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM l.created_at - i.received_at)) * 1000 AS p50,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM l.created_at - i.received_at)) * 1000 AS p99
     FROM ledger_entries l JOIN inbox_events i ON i.id = l.inbox_event_id
     WHERE i.provider_event_id LIKE $1`,
    [`evt_${runId}${tag}_%`],
  );
  return { credited: rows[0].n, p50Ms: Number(rows[0].p50), p99Ms: Number(rows[0].p99) };
}

/** `figures`: what the earlier phases of this run measured (the default rate follows the drain's). */
export async function endToEndPhase(ctx, figures = {}) {
  const { settings, resources, log, events, checkpoint } = ctx;
  const drain = figures.drain ?? {};
  const rate =
    settings.e2eRate ||
    Math.max(
      10,
      Math.round(
        0.5 *
          Math.min(
            drain.tallyOneWorkerEventsPerSecond || 200,
            drain.bareWorkerEventsPerSecond || 200,
            figures.ingest?.tallyRps || 400,
          ),
      ),
    );
  log(`end to end at ${rate} events/s`);
  const tallyDb = await resources.database('e2e-tally');
  const bareDb = await resources.database('e2e-bare');
  const tallyPrefix = resources.prefix('e2e-tally');
  const barePrefix = resources.prefix('e2e-bare');
  const tallyIngest = await ctx.startTallyIngest(tallyDb, tallyPrefix);
  const tallyWorker = ctx.startTallyWorker(tallyDb, tallyPrefix);
  const bareIngest = await ctx.startBareEndpoint('insert-add', bareDb, barePrefix);
  const bareWorkerHandle = ctx.startBareWorker(bareDb, barePrefix);
  const pipelines = {
    tally: { url: tallyIngest.url, pool: benchPool(tallyDb) },
    bare: { url: bareIngest.url, pool: benchPool(bareDb) },
  };
  const rounds = { tally: [], bare: [] };
  try {
    // Warm-up at the measured rate, every event credited, so both pipelines start their first
    // round with compiled code and open connections. (Ten events used to be the warm-up: the
    // first round then measured the JIT and connection set-up of whichever pipeline ran first,
    // with p50 over 100 ms against single digits in later rounds.)
    for (const [target, { url, pool }] of Object.entries(pipelines)) {
      const tag = `e2ewarm${target}`;
      const items = events(Math.ceil(rate * settings.e2eWarmupSeconds) + 5, 10_000, tag);
      const sent = await runOpenLoop({
        url,
        rate,
        durationSeconds: settings.e2eWarmupSeconds,
        next: openLoopRequests(items),
      });
      const deadline = Date.now() + 60_000;
      while ((await endToEndLatency(ctx.runId, pool, tag)).credited < sent.ok && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    for (let pass = 0; pass < settings.e2eRounds; pass += 1) {
      for (const target of rotated(['tally', 'bare'], pass)) {
        const { url, pool } = pipelines[target];
        const tag = `e2e${target}${pass}`;
        const items = events(Math.ceil(rate * settings.e2eSeconds) + 5, 10_000, tag);
        // Like every other measured run: a checkpoint due in the middle of a round (the drain
        // phase before this one writes a lot of WAL) would land on one contender only.
        await checkpoint(pool);
        const sent = await runOpenLoop({
          url,
          rate,
          durationSeconds: settings.e2eSeconds,
          next: openLoopRequests(items),
        });
        const deadline = Date.now() + 60_000;
        let latency = await endToEndLatency(ctx.runId, pool, tag);
        while (latency.credited < sent.ok && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          latency = await endToEndLatency(ctx.runId, pool, tag);
        }
        rounds[target].push({ ...latency, accepted: sent.ok, ingestP99Ms: sent.p99 });
        log(
          `end to end round ${pass + 1}: ${target} p50 ${round(latency.p50Ms, 1)} ms, p99 ${round(latency.p99Ms, 1)} ms (${latency.credited}/${sent.ok} credited)`,
        );
      }
    }
  } finally {
    await Promise.all([
      tallyIngest.handle.stop(),
      tallyWorker.stop(),
      bareIngest.handle.stop(),
      bareWorkerHandle.stop(),
    ]);
    await Promise.all(Object.values(pipelines).map(({ pool }) => pool.end()));
  }
  return {
    rounds: { endToEnd: rounds },
    figures: {
      rate,
      tallyP50Ms: median(rounds.tally.map((entry) => entry.p50Ms)),
      tallyP99Ms: median(rounds.tally.map((entry) => entry.p99Ms)),
      bareP50Ms: median(rounds.bare.map((entry) => entry.p50Ms)),
      bareP99Ms: median(rounds.bare.map((entry) => entry.p99Ms)),
    },
  };
}
