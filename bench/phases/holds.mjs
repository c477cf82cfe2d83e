// Holds: what a hold + capture costs against a plain debit (docs/holds.md). Tally's built api on
// a private database and queue prefix; users prefunded with one never-expiring lot each; a closed
// loop over BENCH_HOLDS_CONNECTIONS concurrent callers, each operation one of:
// - debit: `POST /v1/users/{u}/debits {amount: 1, reference}` (one request, one ledger entry);
// - holdCapture: `POST /v1/users/{u}/holds {amount: 2, reference}` then
//   `POST /v1/users/{u}/holds/{id}/capture {amount: 1}` (two requests, one ledger entry, the
//   rest freed): what an app does around a call whose cost it learns at the end;
// - usage: `POST /v1/users/{u}/usage {feature: 'video', quantity: 1, reference}` (the example
//   catalog's 2 tokens a second: priced by the catalog, one ledger entry; docs/features.md);
// - pricedHoldCapture: `POST /v1/users/{u}/holds {feature: 'video', quantity: 2, reference}` then
//   `…/capture {quantity: 1}`: a hold by estimate captured at the actual cost.
// Rounds alternate the order (debit first in even rounds), each run after a CHECKPOINT; per
// round the ratio of the mean operation latency (holdCapture / debit), the target its median
// (at most 2). Per operation it also reports the api's CPU and, on the private cluster,
// Postgres's CPU, statements and WAL bytes (each round's per-statement figures in the JSON).
// Returns its rounds and figures.

import http from 'node:http';
import { profileEnd, profileStart } from '../lib/pg-profile.mjs';
import { benchPool } from '../lib/resources.mjs';
import { median, percentile, ratio, round } from '../lib/stats.mjs';
import { prefundTallyUsers, startTallyApi } from '../lib/tally-api.mjs';

/** This phase's settings (environment; bench/README.md lists them). */
export function readHoldsSettings(env, profile) {
  const smoke = profile === 'smoke';
  const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
  return {
    connections: num('BENCH_HOLDS_CONNECTIONS', 10),
    seconds: num('BENCH_HOLDS_SECONDS', smoke ? 1 : 3),
    rounds: num('BENCH_HOLDS_ROUNDS', smoke ? 2 : 6),
    users: num('BENCH_HOLDS_USERS', 1000),
    warmupSeconds: smoke ? 0.5 : 2,
  };
}

/** One POST on the keep-alive agent: its status and parsed body. */
function postJson(agent, target, appKey, requestPath, payload) {
  const body = JSON.stringify(payload);
  return new Promise((resolve) => {
    const request = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: requestPath,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${appKey}`,
        },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          let parsed = null;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            parsed = null;
          }
          resolve({ status: response.statusCode, body: parsed });
        });
      },
    );
    request.on('error', () => resolve({ status: null, body: null }));
    request.end(body);
  });
}

/**
 * `connections` callers in a closed loop for `seconds`, users round robin, each operation a
 * debit or a hold + capture (`contender`); the operations' latencies and how many failed.
 */
async function runOperations({ apiUrl, appKey, users, connections, seconds, contender, tag }) {
  const target = new URL(apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  let failed = 0;
  let sent = 0;
  const startedAt = performance.now();
  const deadline = startedAt + seconds * 1000;
  const caller = async () => {
    while (performance.now() < deadline) {
      const n = sent;
      sent += 1;
      const user = users[n % users.length];
      const reference = `${tag}-${n}`;
      const began = performance.now();
      if (contender === 'debit') {
        const debit = await postJson(agent, target, appKey, `/v1/users/${user}/debits`, { amount: 1, reference });
        if (debit.status !== 201) failed += 1;
      } else if (contender === 'usage') {
        const usage = await postJson(agent, target, appKey, `/v1/users/${user}/usage`, {
          feature: 'video',
          quantity: 1,
          reference,
        });
        if (usage.status !== 201) failed += 1;
      } else {
        const priced = contender === 'pricedHoldCapture';
        const hold = await postJson(
          agent,
          target,
          appKey,
          `/v1/users/${user}/holds`,
          priced ? { feature: 'video', quantity: 2, reference } : { amount: 2, reference },
        );
        if (hold.status !== 201 || !hold.body?.id) {
          failed += 1;
          continue;
        }
        const capture = await postJson(
          agent,
          target,
          appKey,
          `/v1/users/${user}/holds/${hold.body.id}/capture`,
          priced ? { quantity: 1 } : { amount: 1 },
        );
        if (capture.status !== 200) failed += 1;
      }
      latencies.push(performance.now() - began);
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, caller));
  } finally {
    agent.destroy();
  }
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    operations: latencies.length,
    failed,
    opsPerSecond: latencies.length / elapsedSeconds,
    meanMs: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
  };
}

const contenders = ['debit', 'holdCapture', 'usage', 'pricedHoldCapture'];

export async function holdsPhase(ctx) {
  const { resources, log, checkpoint, runId } = ctx;
  const settings = readHoldsSettings(process.env, ctx.settings.profile);
  const appKey = `app_bench_${runId}`;
  const databaseUrl = await resources.database('holds');
  const pool = benchPool(databaseUrl);
  const users = await prefundTallyUsers(pool, `holds-bench-${runId}`, settings.users);
  const rounds = [];
  let api;
  try {
    api = await startTallyApi(ctx, { databaseUrl, prefix: resources.prefix('holds'), appKey });
    const apiUrl = api.url;
    log(
      `holds: debit vs hold + capture, ${settings.rounds} alternating round(s) of ${settings.seconds} s each over ${settings.connections} callers`,
    );
    for (const contender of contenders) {
      await runOperations({
        apiUrl,
        appKey,
        users,
        connections: settings.connections,
        seconds: settings.warmupSeconds,
        contender,
        tag: `warm-${contender}`,
      });
    }
    for (let pass = 0; pass < settings.rounds; pass += 1) {
      const pair = {};
      for (const contender of pass % 2 === 0 ? contenders : [...contenders].reverse()) {
        await checkpoint(pool);
        const profile = await profileStart(ctx.postgres, pool);
        const apiCpuAtStart = api.handle.cpuSeconds();
        const run = await runOperations({
          apiUrl,
          appKey,
          users,
          connections: settings.connections,
          seconds: settings.seconds,
          contender,
          tag: `r${pass}-${contender}`,
        });
        if (run.failed > 0) throw new Error(`holds ${contender}: ${run.failed} operations failed`);
        run.apiCpuMsPerOperation = round(((api.handle.cpuSeconds() - apiCpuAtStart) * 1000) / run.operations, 3);
        const figures = await profileEnd(profile, pool, run.operations, 'holds', { awaitDisconnect: false });
        run.postgresCpuMsPerOperation = figures.clusterCpuMsPerEvent;
        run.statementsPerOperation = figures.statementsPerEvent;
        run.walBytesPerOperation = figures.walBytesPerEvent;
        // Per statement (pg_stat_statements, in the JSON only): where an operation's Postgres time goes.
        run.statements = figures.statements;
        pair[contender] = run;
      }
      pair.holdCaptureOverDebitMeanMs = ratio(pair.holdCapture.meanMs, pair.debit.meanMs);
      pair.usageOverDebitMeanMs = ratio(pair.usage.meanMs, pair.debit.meanMs);
      pair.pricedOverAmountHoldMeanMs = ratio(pair.pricedHoldCapture.meanMs, pair.holdCapture.meanMs);
      rounds.push(pair);
      log(
        `holds round ${pass + 1}: ${contenders
          .map(
            (contender) =>
              `${contender} mean ${pair[contender].meanMs.toFixed(1)} ms (${Math.round(pair[contender].opsPerSecond)} ops/s; CPU ms/op api ${pair[contender].apiCpuMsPerOperation}, Postgres ${pair[contender].postgresCpuMsPerOperation ?? 'n/a'}; ${pair[contender].statementsPerOperation ?? 'n/a'} statements)`,
          )
          .join(
            ', ',
          )}; hold+capture/debit ${pair.holdCaptureOverDebitMeanMs.toFixed(3)}, usage/debit ${pair.usageOverDebitMeanMs.toFixed(3)}, priced/amount hold+capture ${pair.pricedOverAmountHoldMeanMs.toFixed(3)}`,
      );
    }
    const check = (
      await pool.query(
        `SELECT (SELECT count(*)::int FROM holds WHERE status <> 'captured') AS open,
                (SELECT count(*)::int FROM wallets w WHERE w.balance <> (SELECT sum(remaining) FROM credit_lots l WHERE l.user_id = w.user_id)) AS off`,
      )
    ).rows[0];
    if (check.open > 0 || check.off > 0) {
      throw new Error(
        `holds: ${check.open} hold(s) not captured, ${check.off} wallet(s) whose lots differ from the balance`,
      );
    }
  } finally {
    await api?.handle.stop();
    await pool.end();
  }
  const fields = [
    'meanMs',
    'p50Ms',
    'p99Ms',
    'opsPerSecond',
    'apiCpuMsPerOperation',
    'postgresCpuMsPerOperation',
    'statementsPerOperation',
    'walBytesPerOperation',
  ];
  const figures = {
    connections: settings.connections,
    rounds: settings.rounds,
    seconds: settings.seconds,
    holdCaptureOverDebitMeanMs: round(median(rounds.map((run) => run.holdCaptureOverDebitMeanMs)), 3),
    usageOverDebitMeanMs: round(median(rounds.map((run) => run.usageOverDebitMeanMs)), 3),
    pricedOverAmountHoldMeanMs: round(median(rounds.map((run) => run.pricedOverAmountHoldMeanMs)), 3),
  };
  for (const contender of contenders) {
    figures[contender] = Object.fromEntries(
      fields.map((field) => [field, median(rounds.map((run) => run[contender][field]))]),
    );
  }
  return { rounds: { holds: rounds }, figures };
}

/** The report's rows for this phase (report.mjs prints them). */
export function holdsReportRows(figures) {
  if (!figures) return [];
  const f = (value, digits = 0) => (Number.isFinite(value) ? String(round(value, digits)) : 'n/a');
  const rows = [
    [
      `Holds: a debit vs a hold + capture (two requests, one ledger entry), medians of ${figures.rounds} paired round(s) of ${figures.seconds} s`,
    ],
  ];
  for (const contender of contenders) {
    const run = figures[contender];
    rows.push([
      `${contender}, ${figures.connections} callers`,
      `mean ${f(run.meanMs, 2)}`,
      `ms; p50 ${f(run.p50Ms, 1)}, p99 ${f(run.p99Ms, 1)} ms; ${f(run.opsPerSecond)} ops/s; CPU ms/op api ${f(run.apiCpuMsPerOperation, 3)}, Postgres ${f(run.postgresCpuMsPerOperation, 3)}; ${f(run.statementsPerOperation, 2)} statements, ${f(run.walBytesPerOperation)} WAL B`,
    ]);
  }
  rows.push([
    "hold + capture / debit, mean latency, median of the rounds' ratios",
    f(figures.holdCaptureOverDebitMeanMs, 3),
    '',
  ]);
  rows.push(["usage / debit, mean latency, median of the rounds' ratios", f(figures.usageOverDebitMeanMs, 3), '']);
  rows.push([
    "priced hold + capture / amount hold + capture, mean latency, median of the rounds' ratios",
    f(figures.pricedOverAmountHoldMeanMs, 3),
    '',
  ]);
  return rows;
}
