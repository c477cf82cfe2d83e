// biome-ignore-all lint/suspicious/noTemplateCurlyInString: mutations name template-literal source text
// `npm run test:mutations`: proves the suite guards the engine's guarantees. Each mutation
// removes one guard from the source, runs the tests that should notice, expects them to FAIL,
// and restores the file (also on Ctrl-C). Exit 1 if any mutation survives.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureBuilt, log, root } from './bootstrap.mjs';

const mutations = [
  {
    name: 'production reads .env.example (the demo secrets and switches fill what the operator left unset)',
    file: 'scripts/bootstrap.mjs',
    from: "  if (process.env.NODE_ENV === 'production') return",
    to: '  if (false) return',
    tests: ['test/e2e/production-configuration.int'],
  },
  {
    name: 'production accepts the demo secrets, body-only packs and sandbox payments',
    file: 'packages/platform/src/config/production-configuration.ts',
    from: 'for (const problem of demoConfigurationProblems(config)) {',
    to: 'for (const problem of demoConfigurationProblems({})) {',
    build: true,
    tests: ['test/e2e/production-configuration.int'],
  },
  {
    name: 'app webhook per-user order gate removed (a later message of a user delivered while an earlier one is pending)',
    file: 'packages/billing-core/src/app-webhooks/deliver-app-webhook-message.ts',
    from: "                  AND earlier.status IN ('pending', 'processing'))`;",
    to: '                  AND false)`;',
    tests: ['test/e2e/app-webhooks.int'],
  },
  {
    name: 'app webhook attempt fence removed (a superseded attempt records its outcome over the newer claim)',
    file: 'packages/billing-core/src/app-webhooks/deliver-app-webhook-message.ts',
    from: "    .where('attempts', '=', attempts)\n",
    to: '',
    tests: ['test/e2e/app-webhooks-superseded-attempt.int'],
  },
  {
    name: 'blocked app webhook not re-checked after parking (a predecessor finishing meanwhile leaves it waiting out its delay)',
    file: 'apps/worker/src/processors/app-webhook-processor.ts',
    from: 'if (!(await isAppWebhookMessageBlocked(deps.db, appWebhookMessageId))) {',
    to: 'if (false && !(await isAppWebhookMessageBlocked(deps.db, appWebhookMessageId))) {',
    tests: ['test/e2e/app-webhooks-wake.int'],
  },
  {
    name: 'app webhook claim not tried again when its reason finds the message claimable (a predecessor delivered in between strands it)',
    file: 'packages/billing-core/src/app-webhooks/deliver-app-webhook-message.ts',
    from: "  if (row.claimable) return { kind: 'claimable' };\n",
    to: '',
    tests: ['test/e2e/app-webhooks-wake.int'],
  },
  {
    name: 'ledger totals fold a range without waiting for the transactions that could still hold its ids (a late commit is never counted)',
    file: 'packages/billing-core/src/operations/ledger-totals.ts',
    from: 'checkpoints.filter((checkpoint) => checkpoint.assignedAfter <= lastXmin).at(-1)',
    to: 'checkpoints.at(-1)',
    tests: ['packages/billing-core/src/operations/ledger-totals.int'],
  },
  {
    name: "ledger totals settle against the read snapshot's xmax (a writer above the last completed id, still running, is folded past)",
    file: 'packages/billing-core/src/operations/ledger-totals.ts',
    from: 'pg_current_xact_id()::text AS assigned',
    to: 'pg_snapshot_xmax(pg_current_snapshot())::text AS assigned',
    tests: ['packages/billing-core/src/operations/ledger-totals.int'],
  },
  {
    name: "ledger entries' wallet.* messages no longer written",
    file: 'packages/billing-core/src/ledger/ledger-entry-messages.ts',
    from: '     WHERE m.ord = 1\n',
    to: '     WHERE false\n',
    tests: ['test/e2e/app-webhooks.int'],
  },
  {
    name: 'app webhook hand-off after commit removed (new messages wait for the relay pass)',
    file: 'packages/billing-core/src/unit-of-work/unit-of-work.ts',
    from: '  if (committing) await handOffCommitted(deps.outbox, uow);',
    to: '  if (committing && false) await handOffCommitted(deps.outbox, uow);',
    tests: ['test/e2e/app-webhooks-hand-off.int', 'packages/billing-core/src/unit-of-work/unit-of-work.int'],
  },
  {
    name: 'retention role ignores APP_WEBHOOK_RETENTION_DAYS (a fixed 30 days)',
    file: 'apps/worker/src/roles/retention-role.ts',
    from: 'retentionDays: settings.appWebhooks.retentionDays,',
    to: 'retentionDays: 30,',
    tests: ['test/e2e/retention.int'],
  },
  {
    name: 'Stripe signature: any signature accepted (the SDK check removed)',
    file: 'apps/ingest/src/verify/verify-stripe-signature.ts',
    from: '      signature.verifyHeader(rawBody, header, secret, toleranceSeconds, undefined, nowMs);\n',
    to: '',
    tests: ['apps/ingest/src/verify/verify-stripe-signature.test', 'test/e2e/stripe-webhooks.int'],
  },
  {
    name: 'Stripe signature: replays past the tolerance accepted',
    file: 'apps/ingest/src/verify/verify-stripe-signature.ts',
    from: 'toleranceSeconds, undefined, nowMs);',
    to: 'toleranceSeconds * 1000, undefined, nowMs);',
    tests: ['apps/ingest/src/verify/verify-stripe-signature.test'],
  },
  {
    name: 'Stripe signature: timestamps far in the future accepted',
    file: 'apps/ingest/src/verify/verify-stripe-signature.ts',
    from: 'if (Number(timestamp) - Math.floor(nowMs / 1000) > toleranceSeconds) {',
    to: 'if (false) {',
    tests: ['apps/ingest/src/verify/verify-stripe-signature.test'],
  },
  {
    name: 'ingest batch inserted in arrival order (concurrent batches sharing keys can deadlock)',
    file: 'packages/billing-core/src/inbox/record-inbox-events.ts',
    from: '  unique.sort(compareKeys);',
    to: '  // unique.sort(compareKeys);',
    tests: ['test/e2e/ingest-batching.int'],
  },
  {
    name: 'per-user advisory lock removed (claimed path)',
    file: 'packages/billing-core/src/inbox/inbox-transitions.ts',
    from: 'WHERE ${userId}::text IS NOT NULL)',
    to: 'WHERE false)',
    tests: ['test/e2e/engine'],
  },
  {
    name: 'per-user advisory lock removed (one-transaction first attempt)',
    file: 'packages/billing-core/src/inbox/inbox-transitions.ts',
    from: 'SELECT *, pg_advisory_xact_lock(${s.namespace}, hashtext(user_id))::text AS user_locked',
    to: 'SELECT *, NULL::text AS user_locked',
    tests: ['test/e2e/engine'],
  },
  {
    name: "user locks taken in the rows' or the caller's order, not in key order (two batches, or a batch and lockUsers, can deadlock)",
    file: 'packages/billing-core/src/db/user-lock-order.ts',
    from: `(SELECT DISTINCT hashtext(users.user_id) AS key FROM (\${userIds}) AS users
           WHERE users.user_id IS NOT NULL ORDER BY 1) AS keys`,
    to: `(SELECT hashtext(users.user_id) AS key FROM (\${userIds}) AS users
           WHERE users.user_id IS NOT NULL) AS keys`,
    tests: ['test/e2e/inbox-batch', 'packages/billing-core/src/users/lock-user.int'],
  },
  {
    name: 'lockUsers waits for a user lock below one its transaction holds (a handler locking a linked user after the event user can deadlock)',
    file: 'packages/billing-core/src/users/lock-user.ts',
    from: '(hashtext(wanted.user_id) <= (SELECT top FROM held)) IS TRUE AS below',
    to: 'false AS below',
    tests: ['packages/billing-core/src/users/lock-user.int'],
  },
  {
    name: 'an event whose handler met a user lock out of order deferred instead of applied again with its user locks taken in order',
    file: 'packages/billing-core/src/inbox/process-inbox-events.ts',
    from: 'if (!(error instanceof UserLockOrderError) || pass >= maxLockOrderPasses) throw error;',
    to: 'if (!(error instanceof UserLockOrderError) || pass >= 1) throw error;',
    tests: ['packages/billing-core/src/users/lock-user.int'],
  },
  {
    name: 'batched first runs take no user locks (two replicas apply one user at once)',
    file: 'packages/billing-core/src/db/user-lock-order.ts',
    from: 'SELECT pg_advisory_xact_lock(${namespace}, keys.key)::text AS locked',
    to: 'SELECT ${namespace}::text || keys.key::text AS locked',
    tests: ['test/e2e/engine'],
  },
  {
    name: 'batched first runs mark rows finished unconditionally (a batch commits over a row another run claimed)',
    file: 'packages/billing-core/src/inbox/inbox-transitions.ts',
    from: "WHERE inbox_events.id = mark.id AND inbox_events.status = 'received' AND inbox_events.attempts = 0",
    to: 'WHERE inbox_events.id = mark.id',
    tests: ['test/e2e/inbox-batch'],
  },
  {
    name: 'a failing event left out of its batch instead of rolling the batch back (its partial effects commit)',
    file: 'packages/billing-core/src/inbox/process-inbox-events.ts',
    from: 'const result = await handler.apply(uow, row, local.prepared);',
    to: 'const result = await handler.apply(uow, row, local.prepared).catch(() => undefined);\n        if (result === undefined) continue;',
    tests: ['test/e2e/inbox-batch'],
  },
  {
    name: 'relay recovery of rows stuck in processing removed',
    file: 'packages/billing-core/src/relay/durable-row-source.ts',
    from: ': sql`(status = ${spec.processingStatus}',
    to: ': sql`(false AND status = ${spec.processingStatus}',
    tests: ['test/e2e/engine'],
  },
  {
    name: 'ledger reference conflicts answered as already-posted',
    file: 'packages/billing-core/src/ledger/post-ledger-entry.ts',
    from: 'if (entry.user_id !== posting.userId || entry.amount !== posting.amount) {',
    to: 'if (false) {',
    tests: ['test/e2e/engine'],
  },
  {
    name: 'ledger reference conflicts compare the amount only (another user answered as already-posted)',
    file: 'packages/billing-core/src/ledger/post-ledger-entry.ts',
    from: 'if (entry.user_id !== posting.userId || entry.amount !== posting.amount) {',
    to: 'if (entry.amount !== posting.amount) {',
    tests: ['test/e2e/engine'],
  },
  {
    name: 'retry later from apply committed instead of rolled back (one-transaction first attempt)',
    file: 'packages/billing-core/src/inbox/process-inbox-events.ts',
    from: "return rollbackWith({ kind: 'rolled-back', cause: { kind: 'retry-later', row, error } });",
    to: "return commitWith({ kind: 'rolled-back', cause: { kind: 'retry-later', row, error } });",
    tests: ['test/e2e/engine'],
  },
  {
    name: 'retry later from apply committed instead of rolled back (claimed path)',
    file: 'packages/billing-core/src/inbox/process-inbox-events.ts',
    from: "return rollbackWith({\n          kind: 'retry-later',",
    to: "return commitWith({\n          kind: 'retry-later',",
    tests: ['test/e2e/engine'],
  },
  {
    name: 'a rollback decision committed (runInTransaction)',
    file: 'packages/billing-core/src/db/run-in-transaction.ts',
    from: "if (decision.kind === 'rollback') throw new RollbackDecided(decision.value);",
    to: "if (decision.kind === 'rollback' && false) throw new RollbackDecided(decision.value);",
    tests: ['packages/billing-core/src/db/run-in-transaction'],
  },
  {
    name: 'a precompiled statement fills its parameters out of slot order',
    file: 'packages/billing-core/src/db/precompiled-sql.ts',
    from: 'parameters[index] = (values as Record<keyof V, unknown>)[slots[index] as keyof V];',
    to: 'parameters[index] = (values as Record<keyof V, unknown>)[slots[slots.length - 1 - index] as keyof V];',
    tests: ['packages/billing-core/src/db/precompiled-sql.int'],
  },
  {
    name: "a precompiled statement runs on a transaction's connection after the transaction ended",
    file: 'packages/billing-core/src/db/precompiled-sql.ts',
    from: 'return connection.inTransaction && connection.epoch === epoch ? connection : undefined;',
    to: 'return connection;',
    tests: ['packages/billing-core/src/db/precompiled-sql.int'],
  },
  {
    name: 'two advisory locks share a key',
    file: 'packages/billing-core/src/db/advisory-locks.ts',
    from: 'export const STUDIO_LOCK_NAMESPACE = 7_411_005;',
    to: 'export const STUDIO_LOCK_NAMESPACE = 7_411_001;',
    tests: ['packages/billing-core/src/db/advisory-locks'],
  },
  {
    name: 'an advisory lock key spelled out outside the registry',
    file: 'packages/billing-core/src/users/lock-user.ts',
    from: 'pg_try_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(user_id))',
    to: 'pg_try_advisory_xact_lock(7411001, hashtext(user_id))',
    tests: ['packages/billing-core/src/db/advisory-locks'],
  },
  {
    name: 'lease claimed without the expiry condition',
    file: 'packages/billing-core/src/db/run-with-lease.ts',
    from: '      WHERE l.expires_at <= now()\n',
    to: '',
    tests: ['test/e2e/pgbouncer'],
  },
  {
    name: 'migration lock removed (each migration transaction)',
    file: 'packages/billing-core/src/db/migrate.ts',
    from: "await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);",
    to: 'void MIGRATION_LOCK_KEY;',
    tests: ['test/e2e/pgbouncer', 'packages/billing-core/src/db/migrate'],
  },
  {
    name: 'idle-in-transaction timeout no longer set in each transaction',
    file: 'packages/billing-core/src/db/create-db.ts',
    from: ': `begin; set local idle_in_transaction_session_timeout = ${idleInTransactionTimeoutMs}`;',
    to: ": 'begin';",
    tests: ['test/e2e/frozen-transaction'],
  },
  {
    name: 'attempts counted at completion instead of at claim',
    file: 'packages/billing-core/src/inbox/inbox-transitions.ts',
    from: 'attempts = CASE WHEN ${exhausted} THEN attempts ELSE attempts + 1 END,',
    to: 'attempts = attempts,',
    tests: ['test/e2e/poison'],
    // The poison test runs a compiled worker process.
    build: true,
  },
  {
    name: 'one-transaction first attempt allowed on re-runs (stalled jobs)',
    file: 'packages/billing-core/src/inbox/plan-attempt.ts',
    from: "if (!isFirstRun(facts)) return 'claim';",
    to: "if (false) return 'claim';",
    tests: ['test/e2e/poison', 'packages/billing-core/src/inbox/plan-attempt.test'],
    build: true,
  },
  {
    name: "stalled re-runs run side by side instead of in the stalled lane (a poison event's neighbours spend attempts on its deaths and park)",
    file: 'packages/billing-core/src/inbox/plan-attempt.ts',
    from: "if (facts.stalls > 0) return 'stalled';",
    to: "if (false) return 'stalled';",
    tests: ['test/e2e/poison', 'packages/billing-core/src/inbox/plan-attempt.test'],
    build: true,
  },
  {
    name: 'a "retry later" job runs again at once instead of at the row\'s next_attempt_at',
    file: 'apps/worker/src/processors/inbox-processor.ts',
    from: 'await job.moveToDelayed(Date.now() + result.delayMs, token);',
    to: 'await job.moveToDelayed(Date.now(), token);',
    tests: ['test/e2e/engine'],
  },
  {
    name: 'a failed job runs again at once instead of after its backoff',
    file: 'apps/worker/src/processors/inbox-processor.ts',
    from: '}\n        await job.moveToDelayed(Date.now() + result.delayMs, token);',
    to: '}\n        await job.moveToDelayed(Date.now(), token);',
    tests: ['test/e2e/retries'],
  },
  {
    name: 'reconcile reads the system time instead of its clock',
    file: 'packages/billing-core/src/reconcile/reconcile-stripe.ts',
    from: 'const now = (deps.clock ?? systemClock).now();',
    to: 'const now = systemClock.now();',
    tests: ['test/e2e/reconcile.int'],
  },
  {
    name: 'reconcile stops checking the ledger entry a credited Stripe event promises',
    file: 'packages/billing-core/src/reconcile/find-stripe-events-without-rows.ts',
    from: 'SELECT 1 FROM ledger_entries l WHERE l.reference = e.reference)',
    to: 'SELECT 1)',
    tests: ['test/e2e/reconcile.int'],
  },
  {
    name: 'reconcile stops reporting Stripe ledger rows without an event',
    file: 'packages/billing-core/src/reconcile/find-stripe-ledger-rows-without-event.ts',
    from: 'WHERE starts_with(l.reference, ${stripe})',
    to: 'WHERE starts_with(l.reference, ${stripeInstallment})',
    tests: ['test/e2e/reconcile.int'],
  },
  {
    name: 'reconcile no longer accounts for a Stripe ledger row by the event it is linked to',
    file: 'packages/billing-core/src/reconcile/find-stripe-ledger-rows-without-event.ts',
    from: "AND NOT EXISTS (SELECT 1 FROM inbox_events i WHERE i.id = l.inbox_event_id AND i.provider = 'stripe')",
    to: '',
    tests: ['test/e2e/reconcile.int'],
  },
  {
    name: 'reconcile no longer accounts for a Stripe invoice ledger row by an event naming the invoice',
    file: 'packages/billing-core/src/reconcile/find-stripe-ledger-rows-without-event.ts',
    from: 'i.provider_invoice_id = substr',
    to: 'false AND i.provider_invoice_id = substr',
    tests: ['test/e2e/reconcile.int'],
  },
  {
    name: 'payment environment policy reads every event as production',
    file: 'packages/billing-core/src/provider-data/payment-environment.ts',
    from: 'return row.environment;',
    to: "return row.environment === null ? null : 'production';",
    tests: ['test/e2e/payment-environments'],
  },
  {
    name: "email consumer claims stale rows after its own window, not the relay's",
    file: 'apps/worker/src/roles/email-role.ts',
    from: 'processingStaleAfterMs: settings.relay.processingStaleAfterMs,',
    to: 'processingStaleAfterMs: 5 * 60_000,',
    tests: ['test/e2e/email-outbox-recovery'],
  },
  {
    name: 'worker runtime starts every role of the table, not the named ones',
    file: 'apps/worker/src/worker-runtime.ts',
    from: '.filter((role) => options.roles.includes(role));',
    to: ".filter((role) => role !== 'email');",
    tests: ['test/e2e/worker-runtime'],
  },
  {
    name: 'idempotency key: the body left out of its fingerprint',
    file: 'packages/billing-core/src/idempotency/fingerprint-request-body.ts',
    from: '.update(toCanonicalJson(body))',
    to: ".update('')",
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: "idempotency key: a running attempt's lease ignored (a retry runs beside it)",
    file: 'packages/billing-core/src/idempotency/claim-idempotency-key.ts',
    from: "eb('idempotency_keys.locked_at', 'is', null),",
    to: 'sql<boolean>`true`,',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'idempotency key: the studio answer kept after the commit instead of with it',
    // The route hands the key to no transaction: the use case then says it kept no answer, and
    // the idempotent POST keeps the 202 after the commit, before it is sent.
    file: 'apps/api/src/routes/v1/studio-routes.ts',
    from: 'key && { ...key, answer: toCreatedAnswer },',
    to: 'process.env.TALLY_MUTATION_NEVER_SET ? key && { ...key, answer: toCreatedAnswer } : undefined,',
    tests: ['test/e2e/idempotency-crash'],
    // The crash test runs the compiled api.
    build: true,
  },
  {
    name: 'idempotency key: a concurrent attempt of a studio key not refused (its try-lock always taken)',
    file: 'packages/billing-core/src/idempotency/idempotency-key-in-transaction.ts',
    from: 'FROM (SELECT pg_try_advisory_xact_lock(${IDEMPOTENCY_KEY_LOCK_NAMESPACE},',
    to: 'FROM (SELECT true OR pg_try_advisory_xact_lock(${IDEMPOTENCY_KEY_LOCK_NAMESPACE},',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'idempotency key: a studio key the unique index refused taken as kept (the request commits beside the stored key)',
    file: 'packages/billing-core/src/studio/create-studio-request.ts',
    from: 'if (idempotency && answer && !keyKept) {',
    to: 'if (idempotency && answer && !keyKept && process.env.TALLY_MUTATION_NEVER_SET) {',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'idempotency key: a studio POST takes over a claim whose lease still runs',
    file: 'packages/billing-core/src/idempotency/idempotency-key-in-transaction.ts',
    from: "eb('locked_at', 'is', null),",
    to: 'sql<boolean>`true`,',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'idempotency key: a retryable answer kept as final (isFinalAnswer ignores the retryable flag: a confirm is told "not paid" forever)',
    file: 'packages/billing-core/src/idempotency/finish-idempotency-key.ts',
    from: 'return answer.status < 500 && !answer.retryable;',
    to: 'return answer.status < 500;',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: "idempotency key: a retryable answer kept as final (the top-up routes' answer to a retryable error not marked retryable)",
    file: 'apps/api/src/routes/v1/topup-routes.ts',
    from: 'return { ...answer, retryable: error.retryable };',
    to: 'return { ...answer, retryable: false };',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: "idempotency key: a claimed POST's answer not kept under its key (a retried confirm runs again)",
    file: 'apps/api/src/http/idempotency.ts',
    from: 'if (claim && !answer.kept) {',
    to: 'if (claim && !answer.kept && process.env.TALLY_MUTATION_NEVER_SET) {',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: "idempotency key: a one-transaction POST's answer its transaction did not commit not kept (a 402 retried runs again)",
    file: 'apps/api/src/http/idempotency.ts',
    from: 'if (key && !answer.kept && isFinalAnswer(answer)) {',
    to: 'if (process.env.TALLY_MUTATION_NEVER_SET && key && !answer.kept && isFinalAnswer(answer)) {',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'idempotency key: an attempt whose lease was taken over answers 500, not 409 idempotency_key_in_use',
    file: 'apps/api/src/http/idempotency.ts',
    from: 'if (error instanceof IdempotencyLeaseLostError && !res.headersSent) return sendAnswer(res, inUseAnswer);',
    to: 'if (process.env.TALLY_MUTATION_NEVER_SET) return sendAnswer(res, inUseAnswer);',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: "idempotency key: scoped by the canonical user, not the path's id (a link made between a call and its retry charges again)",
    file: 'apps/api/src/http/idempotency.ts',
    from: 'userId: requestedId,',
    to: 'userId: userScopeOf(res).userId,',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'idempotency key: a POST route without the wrapper accepted at start (a new route forgets its key)',
    file: 'apps/api/src/http/idempotency.ts',
    from: 'if (posts.length > 0 && !posts.some((layer) => wrapped.has(layer.handle))) {',
    to: 'if (posts.length > 0 && process.env.TALLY_MUTATION_NEVER_SET) {',
    tests: ['apps/api/src/http/idempotency.test'],
  },
  {
    name: 'idempotency key: the unique (user, key) removed',
    file: 'packages/billing-core/migrations/0013_idempotency_keys.sql',
    from: '  CONSTRAINT idempotency_keys_user_key_uq UNIQUE (user_id, idempotency_key),\n',
    to: '',
    tests: ['test/e2e/idempotency.int'],
  },
  {
    name: 'RevenueCat token pack credited without RevenueCat listing its store transaction',
    file: 'packages/billing-core/src/providers/revenuecat/routes/token-pack-purchase.ts',
    from: '      if (listed) {',
    to: '      if (true) {',
    tests: ['test/e2e/revenuecat-pack-verification'],
  },
  {
    name: 'RevenueCat fence: token pack links the body ids though the REST read confirmed others (a forged alias moves the credit)',
    file: 'packages/billing-core/src/providers/revenuecat/routes/token-pack-purchase.ts',
    from: 'const ids = verified ? verified.confirmedIds : readId === undefined ? [] : [readId];',
    to: 'const ids = verified ? linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])]) : [];',
    tests: ['test/e2e/revenuecat-confirmed-links'],
  },
  {
    name: 'RevenueCat fence: unverified (demo) token pack links the body ids (a body alone moves the credit)',
    file: 'packages/billing-core/src/providers/revenuecat/routes/token-pack-purchase.ts',
    from: 'const ids = verified ? verified.confirmedIds : readId === undefined ? [] : [readId];',
    to: 'const ids = verified ? verified.confirmedIds : linkableIds([event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])]);',
    tests: ['test/e2e/revenuecat-confirmed-links'],
  },
  {
    name: 'RevenueCat fence: subscription event links the body ids (a forged alias moves the plan)',
    file: 'packages/billing-core/src/providers/revenuecat/routes/subscription-events.ts',
    from: 'const ids = revenueCatConfirmedIds(readId, read.subscriber);',
    to: 'const ids = linkableIds([readId, event.original_app_user_id, ...(event.aliases ?? [])]);',
    tests: ['test/e2e/revenuecat-confirmed-links'],
  },
  {
    name: 'RevenueCat fence: store transaction claimed only when verified (a second event id credits it again)',
    file: 'packages/billing-core/src/providers/revenuecat/routes/token-pack-purchase.ts',
    from: 'if (claimed.inbox_event_id !== row.id) {',
    to: 'if (verified && claimed.inbox_event_id !== row.id) {',
    tests: ['test/e2e/revenuecat-pack-transaction-fence'],
  },
  {
    name: "RevenueCat fence: token pack refund takes from the body's user instead of the credited one",
    file: 'packages/billing-core/src/providers/revenuecat/routes/token-pack-refund.ts',
    from: 'userId: credit.user_id,',
    to: 'userId: event.app_user_id ?? credit.user_id,',
    tests: ['test/e2e/revenuecat-pack-transaction-fence'],
  },
  {
    name: 'Stripe take-back (refund, chargeback) allowed below zero',
    file: 'packages/billing-core/src/refunds/take-back-payment-tokens.ts',
    from: 'const taken = Math.min(owed, wallet?.balance ?? 0);',
    to: 'const taken = owed;',
    tests: ['test/e2e/stripe-disputes'],
  },
  {
    name: 'chargeback reinstatement gives back the shortfall too',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-dispute.ts',
    from: 'const givenBack = Math.min(record.tokens_taken, released - shortfallReleased);',
    to: 'const givenBack = released;',
    tests: ['test/e2e/stripe-disputes'],
  },
  {
    name: 'Stripe take-backs: chargeback reinstatement ignores the refunds (a dispute won then refunded gives the tokens back)',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-dispute.ts',
    from: 'Math.max(0, tokensAccountedOf(payment) - refundsTake)',
    to: 'Math.max(0, tokensAccountedOf(payment) - 0 * refundsTake)',
    tests: ['test/e2e/stripe-refunds-after-disputes'],
  },
  {
    name: 'Stripe take-backs: chargeback reinstatement gives back taken tokens before forgiving its shortfall',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-dispute.ts',
    from: 'const shortfallReleased = Math.min(record.shortfall, released);',
    to: 'const shortfallReleased = Math.max(0, released - record.tokens_taken);',
    tests: ['test/e2e/stripe-refunds-after-disputes'],
  },
  {
    name: 'Stripe take-backs: chargeback reinstatement schedules again the installments of a refunded invoice',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-dispute.ts',
    from: "if (payment.kind !== 'subscription_invoice' || refundedInFull) return",
    to: "if (payment.kind !== 'subscription_invoice') return",
    tests: ['test/e2e/stripe-refunds-after-disputes'],
  },
  {
    name: 'Stripe take-backs: partial refund of an annual invoice leaves its installments at their full share',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-refunded.ts',
    from: ': await scaleInvoiceInstallments(trx, payment, {',
    to: ': 0 * Number(scaleInvoiceInstallments === undefined) + 0 * Number({',
    tests: ['test/e2e/stripe-installments-partial-refund'],
  },
  {
    name: 'Stripe take-backs: successive partial refunds scale installments from their scaled share (rounding compounds)',
    file: 'packages/billing-core/src/installments/scale-invoice-installments.ts',
    from: 'sql<number>`(full_tokens * ${remaining}::bigint)',
    to: 'sql<number>`(tokens * ${remaining}::bigint)',
    tests: ['test/e2e/stripe-installments-partial-refund'],
  },
  {
    name: 'Stripe take-backs: partial refund scales only scheduled installments (a claimed or dispute-voided one keeps its full share)',
    file: 'packages/billing-core/src/installments/scale-invoice-installments.ts',
    from: ".where('status', '<>', 'granted')",
    to: ".where('status', '=', 'scheduled')",
    tests: ['test/e2e/stripe-installments-partial-refund'],
  },
  {
    name: 'Stripe take-backs: installment grant posts the claimed row’s tokens (a partial refund scaling it meanwhile is not seen)',
    file: 'packages/billing-core/src/installments/grant-due-installments.ts',
    from: '      amount: tokens,',
    to: '      amount: Number(row.tokens),',
    tests: ['test/e2e/stripe-installments-partial-refund'],
  },
  {
    name: 'Stripe take-backs: refund target ignores what installments granted at a scaled share already kept back',
    file: 'packages/billing-core/src/refunds/take-back-payment-tokens.ts',
    from: 'return Math.min(grants.granted, Math.max(0, share - keptBack));',
    to: 'return Math.min(grants.granted, Math.max(0, share - 0 * keptBack));',
    tests: ['test/e2e/stripe-installments-partial-refund'],
  },
  {
    name: 'Stripe take-backs: refund of an invoice not recorded yet dropped as unknown_payment instead of waiting',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-refunded.ts',
    from: 'return retryLater(`invoice ${chargeInvoice.invoiceId} of charge ${chargeId} is not recorded yet`);',
    to: "return ignored('unknown_payment', `invoice ${chargeInvoice.invoiceId} of charge ${chargeId}`);",
    tests: ['test/e2e/stripe-refund-order'],
  },
  {
    name: 'Stripe take-backs: chargeback of an invoice not recorded yet dropped as unknown_payment instead of waiting',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-dispute.ts',
    from: 'return retryLater(`invoice ${read.invoice.invoiceId} of dispute ${disputeId} is not recorded yet`);',
    to: "return ignored('unknown_payment', `invoice ${read.invoice.invoiceId} of dispute ${disputeId}`);",
    tests: ['test/e2e/stripe-refund-order'],
  },
  {
    name: 'full refund of an annual invoice leaves its installments scheduled',
    file: 'packages/billing-core/src/providers/stripe/routes/charge-refunded.ts',
    from: 'const voided = full ? await voidInvoiceInstallments(trx, payment, null) : 0;',
    to: 'const voided = 0 * Number(voidInvoiceInstallments === undefined);',
    tests: ['test/e2e/stripe-disputes'],
  },
  {
    name: 'installment reference conflict retried instead of parked',
    file: 'packages/billing-core/src/installments/grant-due-installments.ts',
    from: 'const conflict = error instanceof LedgerReferenceConflictError;',
    to: 'const conflict = error instanceof LedgerReferenceConflictError && false;',
    tests: ['test/e2e/stripe-subscriptions'],
  },
  {
    name: 'a failed generation refund does not settle the shortfall of a take-back that ran while it was in flight',
    file: 'packages/billing-core/src/studio/refund-studio-request.ts',
    from: "if (posted.kind === 'posted') {",
    to: "if (posted.kind === 'posted' && false) {",
    tests: ['test/e2e/refund-during-generation'],
  },
  {
    name: 'console: an interpolated value rendered unescaped',
    file: 'apps/api/src/console/html.ts',
    from: 'return escapeHtml(String(value));',
    to: 'return String(value);',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'console: framing by other sites allowed',
    file: 'apps/api/src/console/create-console-routes.ts',
    from: `frameAncestors: ["'none'"],`,
    to: `frameAncestors: ['*'],`,
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'console: same-origin rule for Basic-authenticated POSTs removed',
    file: 'apps/api/src/http/require-admin-key-or-basic.ts',
    from: 'if (!safe && isCrossSite(req)) {',
    to: 'if (false) {',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'console: a Basic POST with neither Origin nor Sec-Fetch-Site passes the same-origin rule',
    file: 'apps/api/src/http/require-admin-key-or-basic.ts',
    from: 'if (fetchSite === undefined && origin === undefined) return true;',
    to: '',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'console: search misses a user whose only trace is an inbox event',
    file: 'packages/billing-core/src/support/find-support-matches.ts',
    from: "if (filed) users.push({ userId: q, via: 'inbox event' });",
    to: '',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'audit: console actions not audited',
    file: 'apps/api/src/app.ts',
    from: "        audit('console'),\n",
    to: '',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'audit: admin API actions not audited',
    file: 'apps/api/src/app.ts',
    from: "admin.use(audit('api'));",
    to: '',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'audit: the row of a requeue, replay or redeliver written after its transaction commits, not in it',
    file: 'packages/billing-core/src/audit/run-audited-action.ts',
    from: '    const auditId = await recordAdminAction(trx, describe(result));\n    return commitWith({ result, auditId });\n  });',
    to: '    return commitWith(result);\n  }).then(async (result) => ({ result, auditId: await recordAdminAction(db, describe(result)) }));',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'audit: a reconciliation or queue dashboard action over HTTP runs without its started row (audited only after it ran)',
    file: 'apps/api/src/http/audit-admin-actions.ts',
    from: '    if (planned.oneTransaction) {',
    to: '    if (true) {',
    tests: ['test/e2e/console.int', 'test/e2e/console-stripe.int'],
  },
  {
    name: 'audit: tally reconcile runs without its started row',
    file: 'apps/cli/src/commands/reconcile.ts',
    from: 'await auditCliAction(db, { action: adminActions.reconcileStripe, request, outcome: AUDIT_STARTED_OUTCOME });',
    to: '',
    tests: ['test/e2e/console-stripe.int'],
    // The CLI runs as its built process.
    build: true,
  },
  {
    name: 'audit: admin_audit rows can be updated',
    file: 'packages/billing-core/migrations/0017_admin_audit.sql',
    from: 'BEFORE UPDATE OR DELETE ON admin_audit',
    to: 'BEFORE DELETE ON admin_audit',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'support view: the ledger cursor ignored (no keyset paging)',
    file: 'packages/billing-core/src/support/read-ledger-section.ts',
    from: "if (beforeId !== undefined) page = page.where('id', '<', beforeId);",
    to: '',
    tests: ['test/e2e/console.int'],
  },
  {
    name: 'facts: the provider list spelled out again (an admin filter of its own)',
    file: 'apps/api/src/routes/admin/event-routes.ts',
    from: 'const providerSchema = z.enum(providers);',
    to: "const providerSchema = z.enum(['stripe', 'revenuecat']);",
    tests: ['test/facts/facts-in-one-place'],
  },
  {
    name: 'facts: migration 0026 leaves stored rows with the dropped code refunded_partially',
    file: 'packages/billing-core/migrations/0026_one_partial_refund_code.sql',
    from: "UPDATE inbox_events SET outcome_code = 'partially_refunded' WHERE outcome_code = 'refunded_partially';",
    to: '',
    tests: ['packages/billing-core/src/db/outcome-code-migration.int'],
  },
  {
    name: 'facts: a billing error code without an HTTP status (unknown_user)',
    file: 'apps/api/src/http/billing-error-statuses.ts',
    from: '  unknown_user: 404,',
    to: '',
    tests: ['apps/api/src/http/billing-error-statuses'],
  },
  {
    name: 'facts: sqlMilliseconds takes milliseconds for seconds',
    file: 'packages/billing-core/src/db/sql-milliseconds.ts',
    from: 'make_interval(secs => ${ms / 1000})',
    to: 'make_interval(secs => ${ms})',
    tests: ['packages/billing-core/src/db/sql-milliseconds.int'],
  },
  {
    name: 'facts: a millisecond duration written in SQL by hand again',
    file: 'packages/billing-core/src/installments/grant-due-installments.ts',
    from: 'now() - ${sqlMilliseconds(options.processingStaleAfterMs)}',
    to: 'now() - make_interval(secs => ${options.processingStaleAfterMs / 1000})',
    tests: ['test/facts/facts-in-one-place'],
  },
  {
    name: 'facts: PAYMENT_ENVIRONMENTS unset accepts no environment instead of the default production',
    file: 'packages/platform/src/config/env.ts',
    from: '.transform((list) => (list.length === 0 ? [...byDefault] : list))',
    to: '.transform((list) => list)',
    tests: ['apps/worker/src/config.test'],
  },
  {
    name: 'facts: a wallet.* payload built in SQL drifts from its TypeScript schema (no reason)',
    file: 'packages/billing-core/src/ledger/ledger-entry-messages.ts',
    from: "'reason', e.reason,",
    to: '',
    tests: ['packages/billing-core/src/app-webhooks/wallet-message-data.int'],
  },
  {
    name: 'facts: the wallet.* payload documented with a field it does not carry',
    file: 'docs/app-webhooks.md',
    from: '`balanceBefore, balanceAfter, reason, createdAt`',
    to: '`balanceBefore, balanceAfter, reason, createdAt, currency`',
    tests: ['packages/billing-core/src/app-webhooks/wallet-message-data.int'],
  },
  {
    name: 'request id: no Request-Id header on the answers',
    file: 'packages/platform/src/http/request-id.ts',
    from: '  res.setHeader(requestIdHeader, id);',
    to: '',
    build: true,
    tests: ['packages/platform/src/http/request-id.int', 'test/e2e/request-id.int', 'test/e2e/worker-port.int'],
  },
  {
    name: 'request id: a valid incoming X-Request-Id is not kept',
    file: 'packages/platform/src/http/request-id.ts',
    from: "typeof incoming === 'string' && keptRequestId.test(incoming) ? incoming : newRequestId()",
    to: 'newRequestId()',
    tests: ['packages/platform/src/http/request-id.int', 'test/e2e/request-id.int'],
  },
  {
    name: 'request id: any incoming X-Request-Id is kept unchecked (spaces, tabs, non-ASCII, empty)',
    file: 'packages/platform/src/http/request-id.ts',
    from: "typeof incoming === 'string' && keptRequestId.test(incoming) ?",
    to: "typeof incoming === 'string' ?",
    tests: ['packages/platform/src/http/request-id.int', 'test/e2e/request-id.int'],
  },
  {
    name: 'request id: an incoming X-Request-Id longer than 128 characters is kept',
    file: 'packages/platform/src/http/request-id.ts',
    from: 'const keptRequestId = /^[\\x21-\\x7E]{1,128}$/;',
    to: 'const keptRequestId = /^[\\x21-\\x7E]+$/;',
    tests: ['packages/platform/src/http/request-id.int', 'test/e2e/request-id.int'],
  },
  {
    name: 'request id: every made id is the same',
    file: 'packages/platform/src/http/request-id.ts',
    from: 'return batch.slice(start, start + idLength);',
    to: 'return batch.slice(0, idLength);',
    tests: ['packages/platform/src/http/request-id.int', 'test/e2e/request-id.int'],
  },
  {
    name: 'request id: req.log not bound to the request id (handler and error lines lose it)',
    file: 'packages/platform/src/http/request-id.ts',
    from: 'logger.child({ requestId: this.requestId })',
    to: 'logger.child({})',
    build: true,
    tests: ['packages/platform/src/http/request-id.int', 'test/e2e/request-id.int', 'test/e2e/worker-port.int'],
  },
  {
    name: 'request id: the access line without the request id',
    file: 'packages/platform/src/http/request-logger.ts',
    from: '      requestId: req.requestId,',
    to: '',
    tests: ['packages/platform/src/http/request-logger.int', 'packages/platform/src/http/request-id.int'],
  },
  {
    name: 'request id: the unexpected-error line written through the process logger, not the request one',
    file: 'packages/platform/src/http/create-service-app.ts',
    from: "req.log.error({ err: error, path: req.path }, 'unexpected error')",
    to: "logger.error({ err: error, path: req.path }, 'unexpected error')",
    tests: ['packages/platform/src/http/request-id.int'],
  },
  {
    name: 'request id: ingest logs a rejected signature through the process logger, not the request one',
    file: 'apps/ingest/src/routes/webhook-routes.ts',
    from: "req.log.warn({ provider: 'stripe', reason: check.reason }, 'webhook signature rejected');",
    to: "deps.logger.warn({ provider: 'stripe', reason: check.reason }, 'webhook signature rejected');",
    tests: ['test/e2e/request-id.int'],
  },
  {
    name: 'request id: ingest logs a request its error handler refused through the process logger, not the request one',
    file: 'apps/ingest/src/app.ts',
    from: "else req.log.warn({ path: req.path, code: failure.code }, 'request rejected');",
    to: "else deps.logger.warn({ path: req.path, code: failure.code }, 'request rejected');",
    tests: ['test/e2e/request-id.int'],
  },
  {
    name: 'request id: a failed readiness check logged through the process logger, not the request one',
    file: 'packages/platform/src/http/health-routes.ts',
    from: '(req.log ?? options.logger).warn(',
    to: 'options.logger.warn(',
    build: true,
    tests: ['test/e2e/request-id.int', 'test/e2e/worker-port.int'],
  },
  {
    name: 'lots: a spend draws from a lot past its expiry',
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: '     WHERE NOT (${spend} AND expired)',
    to: '     WHERE true',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'lots: the draw order forgets the category (promotional before subscription before purchased)',
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: 'expired, expires_at NULLS LAST, draw_rank, id`',
    to: 'expired, expires_at NULLS LAST, id`',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: "lots: a take-back does not take from its payment's lot first",
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: '     ORDER BY (source = ${preferred}) IS TRUE DESC, expired,',
    to: '     ORDER BY expired,',
    tests: ['packages/billing-core/src/ledger/lots.int', 'test/e2e/lots.int'],
  },
  {
    name: 'lots: a spend past the spendable tokens is not refused',
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: '    throw new InsufficientBalanceError(userId, need - left, need);',
    to: '    left = 0;',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'lots: a give-back does not return to the lots its debit drew from',
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: '       WHERE e.reference = ${of} AND e.user_id',
    to: '       WHERE false AND e.user_id',
    tests: ['packages/billing-core/src/ledger/lots.int', 'test/e2e/lots.int'],
  },
  {
    name: 'lots: no opening lot for a balance from before lots (or a credit old code posted)',
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: '  if (gap > 0) {',
    to: '  if (false) {',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'lots: a debit old code posted is not taken from the lots',
    file: 'packages/billing-core/src/ledger/lots.ts',
    from: '  } else if (gap < 0) {',
    to: '  } else if (false) {',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'lots: a posting does not move its lots',
    file: 'packages/billing-core/src/ledger/post-ledger-entry.ts',
    from: '    await applyLotMovement(trx, outcome.entry, posting.lots);',
    to: '',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'lots: an invoice of a creditsExpire period_end price grants a never-expiring lot',
    file: 'packages/billing-core/src/providers/stripe/routes/invoice-paid.ts',
    from: "      const expiring = match.price.creditsExpire === 'period_end';",
    to: '      const expiring = false;',
    tests: ['test/e2e/lots.int'],
  },
  {
    name: "lots: an annual plan's installments of a period_end price never expire",
    file: 'packages/billing-core/src/installments/schedule-installments.ts',
    from: "      input.creditsExpire === 'period_end' ? sql",
    to: '      false ? sql',
    tests: ['test/e2e/lots.int'],
  },
  {
    name: "lots: ledger verify does not compare a wallet's balance with its lots",
    file: 'packages/billing-core/src/ledger/verify-ledger.ts',
    from: '     WHERE w.balance <> coalesce(l.remaining, 0)',
    to: '     WHERE false',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: "lots: ledger verify does not check a debit's draws against its amount",
    file: 'packages/billing-core/src/ledger/verify-ledger.ts',
    from: '     WHERE e.amount < 0 AND d.drawn <> -e.amount',
    to: '     WHERE false',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'lots: the batched backfill of opening lots finds no wallet to open',
    file: 'packages/billing-core/src/ledger/open-missing-lots.ts',
    from: '       WHERE w.balance > coalesce(',
    to: '       WHERE w.balance < coalesce(',
    tests: ['packages/billing-core/src/ledger/lots.int'],
  },
  {
    name: 'grants: a grant retried with its reference answers 201 again (not the same 200)',
    file: 'apps/api/src/http/grant-body.ts',
    from: "return { status: result.kind === 'granted' ? 201 : 200, body: result.answer };",
    to: 'return { status: 201, body: result.answer };',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: a reference reused with another amount is a 500 (the ledger conflict escapes)',
    file: 'packages/billing-core/src/grants/grant-tokens.ts',
    from: 'if (error instanceof LedgerReferenceConflictError && error.reference === grant.reference) {',
    to: 'if (false) {',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: a reference reused with another expiry answers the first grant',
    file: 'packages/billing-core/src/grants/grant-tokens.ts',
    from: 'if ((expiresAt?.getTime() ?? null) !== (grant.expiresAt?.getTime() ?? null)) {',
    to: 'if (false) {',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: an expiry in the past is accepted',
    file: 'apps/api/src/http/grant-body.ts',
    from: '.refine((time) => time.getTime() > Date.now(),',
    to: '.refine((time) => time.getTime() > 0,',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: "grants: a void takes another user's lot",
    file: 'packages/billing-core/src/grants/void-lot.ts',
    from: 'WHERE id = ${request.lotId} AND user_id = ${request.userId}`',
    to: 'WHERE id = ${request.lotId}`',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: a second void does not answer the first',
    file: 'packages/billing-core/src/grants/void-lot.ts',
    from: '  if (previous) {',
    to: '  if (false) {',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: the admin grant is not audited in its own transaction (unnamed route)',
    file: 'apps/api/src/http/audit-admin-actions.ts',
    from: "'POST /admin/users/:userId/grants': {",
    to: "'POST /admin/users/:userId/grants-unnamed': {",
    tests: ['test/e2e/grants.int'],
  },
  {
    name: "grants: the console's grant form has no reference (a double submit grants twice)",
    file: 'apps/api/src/console/pages/user-page.ts',
    from: '<input type="hidden" name="reference" value="${data.grantReference}">',
    to: '',
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: tally user lists no lots',
    file: 'apps/cli/src/commands/user.ts',
    from: 'view.wallet.lots.map((lot) => [',
    to: 'view.wallet.lots.slice(0, 0).map((lot) => [',
    build: true,
    tests: ['test/e2e/grants.int'],
  },
  {
    name: 'grants: a void takes the whole lot even when the balance is lower',
    file: 'packages/billing-core/src/grants/void-lot.ts',
    from: 'const take = Math.min(Number(lot.remaining), balance);',
    to: 'const take = Number(lot.remaining);',
    tests: ['test/e2e/grants.int'],
  },
];

// MUTATIONS=<substring>: run only the mutations whose name contains it; MUTATIONS_DRY_RUN=1 checks the guards are found.
/**
 * Where a guard's text is in a file, whitespace aside: every run of spaces and line breaks in
 * `from` matches any run, so reformatting (indentation, wrapped lines) does not lose a guard.
 */
function guardPattern(from) {
  const words = from
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(words.join('\\s+'));
}

const only = process.env.MUTATIONS;
let survived = 0;
for (const mutation of mutations.filter((m) => !only || m.name.includes(only))) {
  const file = path.join(root, mutation.file);
  const original = readFileSync(file, 'utf8');
  const pattern = guardPattern(mutation.from);
  if (!pattern.test(original)) {
    log(`mutation "${mutation.name}": guard not found in ${mutation.file}; update this script`);
    process.exit(2);
  }
  // MUTATIONS_DRY_RUN=1: only check that every guard is still found (seconds, no test run).
  if (process.env.MUTATIONS_DRY_RUN === '1') continue;
  const restore = () => writeFileSync(file, original);
  // Also when something exits the process mid-mutation (a rebuild of the mutated tree that fails
  // exits from ensureBuilt): never leave a guard removed.
  process.once('exit', restore);
  process.once('SIGINT', () => {
    restore();
    process.exit(130);
  });
  writeFileSync(
    file,
    original.replace(pattern, () => mutation.to.trim()),
  );
  try {
    if (mutation.build) ensureBuilt();
    log(`mutation: ${mutation.name}`);
    const run = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/jest/bin/jest.js'), '--silent', ...mutation.tests],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    const failed = run.stderr.split('\n').filter((line) => line.startsWith('  ● '));
    if (run.status === 0) {
      survived += 1;
      log(`  SURVIVED: ${mutation.tests.join(' ')} stayed green`);
    } else {
      log(`  caught by: ${[...new Set(failed)].map((line) => line.slice(4)).join('; ') || 'a failing run'}`);
    }
  } finally {
    restore();
    process.removeListener('exit', restore);
    if (mutation.build) ensureBuilt();
  }
}
process.exit(survived === 0 ? 0 : 1);
