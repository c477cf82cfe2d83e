// The bench's targets, as data: each is a ratio of two figures of the same run (or one absolute
// figure) with its bound. `op: 'report'` (bound null) is reported, never judged. Figures are
// named by their path in the results' `figures` (phase, then key; bench/phases/*.mjs return them).
// `{clients}` and `{doubledClients}` in a name are the drain's worker concurrency and twice it.
export const targets = [
  { name: 'ingest max vs bare INSERT+add', ratio: ['ingest.tallyRps', 'ingest.bareAddRps'], op: '>=', bound: 1.3 },
  {
    name: 'ingest max vs HTTP floor (verify + parse, no database)',
    ratio: ['ingest.tallyRps', 'ingest.floorRps'],
    op: '>=',
    bound: 0.8,
  },
  {
    name: "ingest CPU per accepted request vs the HTTP floor's",
    ratio: ['ingest.tallyServerCpuUsPerAccepted', 'ingest.floorServerCpuUsPerRequest'],
    op: '<=',
    bound: 1.6,
  },
  { name: 'ingest max vs bare INSERT', ratio: ['ingest.tallyRps', 'ingest.bareInsertRps'], op: 'report', bound: null },
  {
    name: 'ingest max vs pgbench one-row insert',
    ratio: ['ingest.tallyRps', 'ingest.pgbenchInsertTps'],
    op: 'report',
    bound: null,
  },
  {
    name: 'duplicates vs accepted (max throughput)',
    ratio: ['ingest.tallyDuplicateRps', 'ingest.tallyRps'],
    op: '>=',
    bound: 1.0,
  },
  {
    name: 'ingest p99 at 50% of bare max vs bare p99',
    ratio: ['ingest.fixedRate.tally@bareAt50.p99Ms', 'ingest.fixedRate.bareAdd@bareAt50.p99Ms'],
    op: '<=',
    bound: 0.75,
  },
  {
    name: 'ingest p99 at 50% of Tally max vs bare p99 (same rate)',
    ratio: ['ingest.fixedRate.tally@tallyAt50.p99Ms', 'ingest.fixedRate.bareAdd@tallyAt50.p99Ms'],
    op: 'report',
    bound: null,
  },
  {
    name: 'drain (1 worker) vs bare BullMQ worker',
    ratio: ['drain.tallyOneWorkerEventsPerSecond', 'drain.bareWorkerEventsPerSecond'],
    op: '>=',
    bound: 1.0,
  },
  // The minimal worker at its better concurrency (8 or 32, both reported; phases/drain.mjs).
  {
    name: 'drain Stripe packs vs minimal same-guarantee worker (its better concurrency)',
    ratio: ['drain.tallyOneWorkerEventsPerSecond', 'drain.minimalStripeEventsPerSecond'],
    op: '>=',
    bound: 2.0,
  },
  {
    name: 'drain RevenueCat packs vs minimal same-guarantee worker (its better concurrency)',
    ratio: ['drain.tallyRevenueCatEventsPerSecond', 'drain.minimalRevenueCatEventsPerSecond'],
    op: '>=',
    bound: 2.0,
  },
  {
    name: 'Postgres CPU per Stripe pack vs pgbench minimal tx',
    ratio: ['drain.postgresCpuMsPerEvent.tally1', 'drain.postgresCpuMsPerEvent.pgbenchMinimalStripe'],
    op: '<=',
    bound: 1.5,
  },
  {
    name: 'Postgres CPU per RevenueCat pack vs pgbench minimal tx',
    ratio: ['drain.postgresCpuMsPerEvent.tallyRevenueCat', 'drain.postgresCpuMsPerEvent.pgbenchMinimalRevenueCat'],
    op: '<=',
    bound: 1.5,
  },
  {
    name: 'drain Stripe packs vs pgbench minimal (single-event) tx',
    ratio: ['drain.tallyOneWorkerEventsPerSecond', 'drain.pgbenchMinimalStripeTps'],
    op: '>=',
    bound: 0.75,
  },
  {
    name: 'drain RevenueCat packs vs pgbench minimal (single-event) tx',
    ratio: ['drain.tallyRevenueCatEventsPerSecond', 'drain.pgbenchMinimalRevenueCatTps'],
    op: '>=',
    bound: 0.75,
  },
  {
    name: 'drain (1 worker) vs pgbench credit tx',
    ratio: ['drain.tallyOneWorkerEventsPerSecond', 'drain.pgbenchCreditTps'],
    op: '>=',
    bound: 0.4,
  },
  {
    name: 'drain 2 workers vs 1 worker',
    ratio: ['drain.tallyTwoWorkersEventsPerSecond', 'drain.tallyOneWorkerEventsPerSecond'],
    op: '>',
    bound: 1.0,
  },
  {
    name: 'bare worker: 2 processes vs 1 (what the machine allows)',
    ratio: ['drain.bareTwoWorkersEventsPerSecond', 'drain.bareWorkerEventsPerSecond'],
    op: 'report',
    bound: null,
  },
  {
    name: 'pgbench credit tx: {doubledClients} clients vs {clients}',
    ratio: ['drain.pgbenchCreditDoubledClientsTps', 'drain.pgbenchCreditTps'],
    op: 'report',
    bound: null,
  },
  {
    name: 'end to end p99 vs bare pipeline',
    ratio: ['endToEnd.tallyP99Ms', 'endToEnd.bareP99Ms'],
    op: '<=',
    bound: 1.5,
  },
  // Both ratios are each round's keyed / plain, their median over the rounds (phases/idempotency.mjs).
  {
    name: 'studio POST with Idempotency-Key vs without: mean latency, closed loop',
    value: ['idempotency.loaded.keyedOverPlainMeanMs'],
    op: '<=',
    bound: 1.1,
  },
  {
    name: 'studio POST with Idempotency-Key vs without: mean latency, one call at a time',
    value: ['idempotency.serial.keyedOverPlainMeanMs'],
    op: '<=',
    bound: 1.1,
  },
  // The round's hold + capture / debit, their median over the rounds (phases/holds.mjs).
  {
    name: 'hold + capture vs a plain debit: mean latency per operation, closed loop',
    value: ['holds.holdCaptureOverDebitMeanMs'],
    op: '<=',
    bound: 2,
  },
  {
    name: 'hold + capture vs a plain debit: Postgres CPU per operation',
    ratio: ['holds.holdCapture.postgresCpuMsPerOperation', 'holds.debit.postgresCpuMsPerOperation'],
    op: '<=',
    bound: 2,
  },
  // Priced usage (issue 57, docs/features.md): a usage against a plain debit, a hold by estimate +
  // capture against an amount hold + capture (phases/holds.mjs), the median of the rounds' ratios.
  {
    name: 'usage vs a plain debit: mean latency per operation, closed loop',
    value: ['holds.usageOverDebitMeanMs'],
    op: '<=',
    bound: 1.15,
  },
  {
    name: 'usage vs a plain debit: Postgres CPU per operation',
    ratio: ['holds.usage.postgresCpuMsPerOperation', 'holds.debit.postgresCpuMsPerOperation'],
    op: '<=',
    bound: 1.15,
  },
  {
    name: 'priced hold + capture vs an amount hold + capture: mean latency per operation, closed loop',
    value: ['holds.pricedOverAmountHoldMeanMs'],
    op: '<=',
    bound: 1.15,
  },
  {
    name: 'priced hold + capture vs an amount hold + capture: Postgres CPU per operation',
    ratio: ['holds.pricedHoldCapture.postgresCpuMsPerOperation', 'holds.holdCapture.postgresCpuMsPerOperation'],
    op: '<=',
    bound: 1.15,
  },
  // App webhooks (phases/app-webhooks.mjs): the drain target with APP_WEBHOOK_URL set, on that
  // phase's own backlog and same-run bare worker; on against off and the delivery rate, reported.
  {
    name: 'drain with app webhooks on vs bare BullMQ worker',
    ratio: ['appWebhooks.onEventsPerSecond', 'appWebhooks.bareEventsPerSecond'],
    op: '>=',
    bound: 1.0,
  },
  {
    name: 'drain with app webhooks on vs off (same run)',
    ratio: ['appWebhooks.onEventsPerSecond', 'appWebhooks.offEventsPerSecond'],
    op: 'report',
    bound: null,
  },
  {
    name: 'app webhook delivery to a verifying receiver (messages/s)',
    value: ['appWebhooks.deliveryMessagesPerSecond'],
    op: 'report',
    bound: null,
  },
  // Spend (issue 61, phases/spend.mjs): Tally's debits against the minimal same-guarantee endpoint
  // (baselines/minimal-debit.mjs) and pgbench of its transaction; rates and p99s paired round by round.
  {
    name: 'debits (1,000 users, 32 connections) vs the minimal same-guarantee endpoint',
    ratio: ['spend.tallyRps', 'spend.minimalRps'],
    op: '>=',
    bound: 1.0,
  },
  {
    name: "debit p99 at half the minimal endpoint's max (open loop) vs its p99 there",
    ratio: ['spend.fixedRate.tally.p99Ms', 'spend.fixedRate.minimal.p99Ms'],
    op: '<=',
    bound: 1.0,
  },
  {
    name: "debit p99 at half Tally's own max (open loop) vs the minimal's p99 there",
    ratio: ['spend.fixedRate.atTallysHalf.tally.p99Ms', 'spend.fixedRate.atTallysHalf.minimal.p99Ms'],
    op: 'report',
    bound: null,
  },
  {
    name: 'debits on one hot wallet (32 connections) vs the minimal endpoint on its hot row',
    ratio: ['spend.tallyHotRps', 'spend.minimalHotRps'],
    op: '>=',
    bound: 0.8,
  },
  {
    name: "debits vs pgbench of the minimal endpoint's transaction (32 clients)",
    ratio: ['spend.tallyRps', 'spend.pgbenchTps'],
    op: 'report',
    bound: null,
  },
  {
    name: 'the minimal endpoint vs pgbench of its own transaction (what HTTP and Node cost it)',
    ratio: ['spend.minimalRps', 'spend.pgbenchTps'],
    op: 'report',
    bound: null,
  },
  {
    name: 'Postgres CPU per debit vs the minimal endpoint',
    ratio: ['spend.perDebit.tally.postgresCpuMs', 'spend.perDebit.minimal.postgresCpuMs'],
    op: 'report',
    bound: null,
  },
  {
    name: 'server CPU per debit: Tally api vs the minimal endpoint',
    ratio: ['spend.perDebit.tally.serverCpuMs', 'spend.perDebit.minimal.serverCpuMs'],
    op: 'report',
    bound: null,
  },
  { name: 'ingest peak RSS (MB)', value: ['ingest.tallyIngestPeakRssMb'], op: '<=', bound: 200 },
  {
    name: 'worker peak RSS (MB)',
    // The larger of the two drains' peaks (NaN when either drain did not run).
    value: ['drain.tallyWorkerPeakRssMb', 'drain.tallyTwoWorkersPeakRssMb'],
    op: '<=',
    bound: 300,
  },
];
