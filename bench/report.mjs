// The bench's report: the targets judged against a run's figures, and the plain-text table of
// every figure and ratio printed at the end of a run.
import { formatTable, median, ratio, round } from './lib/stats.mjs';
import { holdsReportRows } from './phases/holds.mjs';
import { idempotencyReportRows } from './phases/idempotency.mjs';
import { spendReportRows } from './phases/spend-report.mjs';
import { targets } from './targets.mjs';

const figureAt = (figures, path) => {
  const [phase, ...keys] = path.split('.');
  let value = figures[phase] ?? {};
  for (const key of keys) value = value?.[key];
  return value;
};

/** A figure's values round by round (`<phase>.byRound[<rest of the path>]`), or undefined. */
const roundsAt = (figures, path) => {
  const [phase, ...keys] = path.split('.');
  const series = figures[phase]?.byRound?.[keys.join('.')];
  return Array.isArray(series) ? series : undefined;
};

/**
 * A ratio target's value: the median of the rounds' own ratios when both figures were measured
 * round by round (rotated, so each round's contenders ran close together in time, as the
 * idempotency and holds phases pair theirs), else the ratio of the two figures (medians).
 */
export function pairedRatio(figures, [numerator, denominator]) {
  const ofMedians = ratio(figureAt(figures, numerator), figureAt(figures, denominator));
  const a = roundsAt(figures, numerator);
  const b = roundsAt(figures, denominator);
  if (!a || !b || a.length === 0 || a.length !== b.length) return { value: ofMedians, ofMedians, perRound: null };
  const perRound = a.map((value, pass) => ratio(value, b[pass]));
  return { value: median(perRound), ofMedians, perRound };
}

/** Every target of targets.mjs with its value in this run and whether it was met (null: report only, or not measured). */
export function evaluateTargets(figures, settings) {
  return targets.map(({ name, ratio: pair, value: paths, op, bound }) => {
    const paired = pair ? pairedRatio(figures, pair) : null;
    const value = paired
      ? paired.value
      : paths.length === 1
        ? figureAt(figures, paths[0])
        : Math.max(...paths.map((path) => figureAt(figures, path) ?? Number.NaN));
    return {
      name: name
        .replace('{doubledClients}', String(settings.workerConcurrency * 2))
        .replace('{clients}', String(settings.workerConcurrency)),
      value: round(value, 2),
      // The ratio of the medians and each round's ratio, for the record (null: not per round).
      ratioOfMedians: paired?.perRound ? round(paired.ofMedians, 2) : null,
      perRound: paired?.perRound?.map((each) => round(each, 2)) ?? null,
      target: bound === null ? 'report only' : `${op} ${bound}`,
      met:
        bound === null || !Number.isFinite(value)
          ? null
          : op === '>='
            ? value >= bound
            : op === '>'
              ? value > bound
              : value <= bound,
    };
  });
}

/** The plain-text report of a run's results (settings, machine, figures, targets). */
export function formatReport(results) {
  const { settings, tallyEnvironment } = results;
  const ingest = results.figures.ingest ?? {};
  const drain = results.figures.drain ?? {};
  const e2e = results.figures.endToEnd ?? {};
  const appWebhooks = results.figures.appWebhooks ?? {};
  const fixed = ingest.fixedRate ?? {};
  // The minimal worker's two concurrencies (the drain targets take the better of the two).
  const byConcurrency = drain.minimalEventsPerSecondByConcurrency ?? {};
  const [low, high] = [settings.workerConcurrency, settings.minimalHighConcurrency];
  const f = (value, digits = 0) => (Number.isFinite(value) ? String(round(value, digits)) : 'n/a');
  const rows = [
    [
      `Tally bench (${settings.profile}): ${settings.rounds} alternating ingest round(s), medians; ${settings.drainRounds} drain round(s)`,
    ],
    [
      'machine',
      `${results.machine.cpus} CPU`,
      `${results.machine.cpuModel}; load average at start ${results.machine.loadAverageAtStart.join(' ')}, at end ${results.machine.loadAverageAtEnd?.join(' ')}`,
    ],
    [
      'Tally processes',
      '',
      Object.entries(tallyEnvironment)
        .map(([key, value]) => `${key}=${value}`)
        .join(' '),
    ],
    ['Ingest: max throughput, signed Stripe events 2-4 KB, closed loop'],
    ['pgbench one-row insert', f(ingest.pgbenchInsertTps), `tps (${settings.pgbenchClients} clients, -j 2)`],
    ['bare Express INSERT', f(ingest.bareInsertRps), `req/s (${settings.connections} connections)`],
    ['bare Express INSERT + BullMQ add', f(ingest.bareAddRps), 'req/s'],
    ['HTTP floor (verify, parse, answer)', f(ingest.floorRps), 'req/s (no database)'],
    [
      "HTTP floor with Tally's server constructors",
      f(ingest.floorConstructorsRps),
      `req/s; server ${f(ingest.floorConstructorsServerCpuUsPerRequest)} µs per answer (report only: Express's prototype swap made a no-op)`,
    ],
    [
      'Tally ingest (accepted)',
      f(ingest.tallyRps),
      `req/s; closed-loop p50 ${f(ingest.tallyClosedLoopP50Ms)} ms, p99 ${f(ingest.tallyClosedLoopP99Ms)} ms`,
    ],
    [
      'Tally ingest server CPU',
      f(ingest.tallyServerCpuUsPerAccepted),
      `µs per accepted request (HTTP floor server ${f(ingest.floorServerCpuUsPerRequest)} µs per answer)`,
    ],
    [
      'Tally ingest (duplicates)',
      f(ingest.tallyDuplicateRps),
      `req/s; closed-loop p50 ${f(ingest.tallyDuplicateClosedLoopP50Ms)} ms, p99 ${f(ingest.tallyDuplicateClosedLoopP99Ms)} ms`,
    ],
    ['Ingest: fixed rate, open loop, latency from the scheduled send time (ms)'],
    ...Object.entries(fixed).map(([key, value]) => [
      `${key} (${value.rate}/s)`,
      `p50 ${f(value.p50Ms, 1)}`,
      `p99 ${f(value.p99Ms, 1)}  p99.9 ${f(value.p999Ms, 1)}  (non-200/errors: ${value.non200})`,
    ]),
    ['Tally ingest peak RSS', f(ingest.tallyIngestPeakRssMb), `MB (bare INSERT+add: ${f(ingest.bareAddPeakRssMb)} MB)`],
    [
      `Drain: ${drain.events ?? settings.drainEvents} token-pack events over ${drain.users ?? settings.drainUsers} users (first to last processed_at)`,
    ],
    [
      'Tally, 1 worker process',
      f(drain.tallyOneWorkerEventsPerSecond),
      `events/s (WORKER_CONCURRENCY ${settings.tallyWorkerConcurrency ?? 8}); peak RSS ${f(drain.tallyWorkerPeakRssMb)} MB`,
    ],
    [
      'Tally, 2 worker processes',
      f(drain.tallyTwoWorkersEventsPerSecond),
      `events/s; peak RSS ${f(drain.tallyTwoWorkersPeakRssMb)} MB each at most`,
    ],
    [
      'bare BullMQ worker, same SQL',
      f(drain.bareWorkerEventsPerSecond),
      `events/s (concurrency ${settings.workerConcurrency}); peak RSS ${f(drain.bareWorkerPeakRssMb)} MB`,
    ],
    [
      'bare BullMQ worker, 2 processes',
      f(drain.bareTwoWorkersEventsPerSecond),
      `events/s (concurrency ${settings.workerConcurrency} each)`,
    ],
    ['pgbench credit transaction', f(drain.pgbenchCreditTps), `tps (${settings.workerConcurrency} clients)`],
    [
      'pgbench credit transaction',
      f(drain.pgbenchCreditDoubledClientsTps),
      `tps (${settings.workerConcurrency * 2} clients)`,
    ],
    ...['tally1', 'tally2', 'bare', 'bare2'].map((target) => [
      `CPU per event, ${{ tally1: 'Tally 1 worker', tally2: 'Tally 2 workers', bare: 'bare worker', bare2: 'bare, 2 processes' }[target]}`,
      f(drain.cpuMsPerEvent?.[target]?.worker, 3),
      `ms in the worker process(es), ${f(drain.cpuMsPerEvent?.[target]?.postgres, 3)} ms in Postgres, ${f(drain.cpuMsPerEvent?.[target]?.redis, 3)} ms in Redis`,
    ]),
    ['Drain per flow: events/s, Postgres CPU ms per event (private cluster: every process of it)'],
    ...[
      ['Tally, Stripe packs', drain.tallyOneWorkerEventsPerSecond, 'tally1'],
      [`minimal worker, Stripe packs, concurrency ${low}`, byConcurrency.stripe?.[low], 'minimalStripe'],
      [`minimal worker, Stripe packs, concurrency ${high}`, byConcurrency.stripe?.[high], 'minimalStripeHigh'],
      ['pgbench minimal tx, Stripe packs', drain.pgbenchMinimalStripeTps, 'pgbenchMinimalStripe'],
      ['Tally, RevenueCat packs', drain.tallyRevenueCatEventsPerSecond, 'tallyRevenueCat'],
      [`minimal worker, RevenueCat packs, concurrency ${low}`, byConcurrency.revenueCat?.[low], 'minimalRevenueCat'],
      [
        `minimal worker, RevenueCat packs, concurrency ${high}`,
        byConcurrency.revenueCat?.[high],
        'minimalRevenueCatHigh',
      ],
      ['pgbench minimal tx, RevenueCat packs', drain.pgbenchMinimalRevenueCatTps, 'pgbenchMinimalRevenueCat'],
    ].map(([label, rate, key]) => {
      const profile = drain.profile?.[key];
      return [
        label,
        f(rate),
        `events/s; Postgres ${f(drain.postgresCpuMsPerEvent?.[key], 3)} ms/event${profile ? `, WAL ${f(profile.walBytesPerEvent)} B, ${f(profile.statementsPerEvent, 1)} statements, inbox updates HOT ${f(profile.inboxHotUpdatesPerEvent, 2)} of ${f(profile.inboxUpdatesPerEvent, 2)}` : ''}`,
      ];
    }),
    ['every Tally event credited once', String(drain.allCredited), ''],
    [`End to end at ${e2e.rate ?? 'n/a'} events/s: inbox received_at -> ledger created_at (Postgres clock)`],
    ['Tally', `p50 ${f(e2e.tallyP50Ms, 1)}`, `p99 ${f(e2e.tallyP99Ms, 1)} ms`],
    ['bare pipeline', `p50 ${f(e2e.bareP50Ms, 1)}`, `p99 ${f(e2e.bareP99Ms, 1)} ms`],
    ...idempotencyReportRows(results.figures.idempotency),
    ...holdsReportRows(results.figures.holds),
    ...spendReportRows(results.figures.spend),
    ...appWebhookRows(appWebhooks, settings, f),
    ["Targets (ratios from this run; per round: the median of the rounds' own ratios)"],
    ...results.targets.map((t) => [
      t.name,
      f(t.value, 2),
      `${t.target}${t.met === null ? '' : t.met ? '  met' : '  MISSED'}${t.perRound ? `  (rounds ${t.perRound.map((each) => f(each, 2)).join(', ')}; ratio of medians ${f(t.ratioOfMedians, 2)})` : ''}`,
    ]),
  ];
  return formatTable(rows);
}

/** The app-webhooks phase's rows: the drain with APP_WEBHOOK_URL off and on, side by side, and the delivery. */
function appWebhookRows(figures, settings, f) {
  const perEvent = (key, digits) => `${f(figures[key]?.off, digits)} / ${f(figures[key]?.on, digits)}`;
  return [
    [
      `App webhooks: ${figures.events ?? settings.appWebhookEvents} token-pack events over ${figures.users ?? settings.appWebhookUsers} users, 1 worker, ${settings.appWebhookRounds} rotated round(s), medians`,
    ],
    ['Tally, APP_WEBHOOK_URL unset', f(figures.offEventsPerSecond), 'events/s (messages written, not handed off)'],
    [
      'Tally, APP_WEBHOOK_URL set',
      f(figures.onEventsPerSecond),
      'events/s (each message handed to the queue at commit)',
    ],
    ['bare BullMQ worker, same backlog', f(figures.bareEventsPerSecond), 'events/s'],
    [
      'per event, off / on',
      '',
      `worker ${perEvent('workerCpuMsPerEvent', 3)} ms, Postgres ${perEvent('postgresCpuMsPerEvent', 3)} ms, Redis ${perEvent('redisCpuMsPerEvent', 3)} ms CPU; ${perEvent('statementsPerEvent', 2)} statements, ${perEvent('walBytesPerEvent', 0)} WAL bytes`,
    ],
    [
      'delivery to a verifying receiver',
      f(figures.deliveryMessagesPerSecond),
      `messages/s (one worker, role app-webhooks; ${f(figures.deliveryWorkerCpuMsPerMessage, 3)} ms worker CPU per message)`,
    ],
    ['each message handed off, delivered once, in per-user order', String(figures.deliveredOnceInOrder), ''],
  ];
}
