import { createHash } from 'node:crypto';
import { type DB, verifyLedger } from '@tally/billing-core';
import { type Kysely, sql } from 'kysely';
import type { ChaosCluster } from './chaos-cluster';
import type { SimulatedEvent } from './provider-simulator';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One broken invariant, readable in the report. */
export interface Violation {
  invariant: string;
  detail: string;
}

/**
 * The ledger as of a checkpoint: the highest id and a hash of every row up to it. Ledger rows
 * are facts; a later checkpoint must hash the same rows to the same value (rows only appended).
 */
export interface LedgerCheckpoint {
  maxId: number;
  count: number;
  hash: string;
}

async function ledgerHash(db: Kysely<DB>, upToId: number): Promise<{ count: number; hash: string }> {
  const { rows } = await sql<{
    id: string;
    user_id: string;
    reference: string;
    amount: string;
    balance_before: string;
    balance_after: string;
    reason: string;
    inbox_event_id: string | null;
    created_at: string;
  }>`SELECT id::text, user_id, reference, amount::text, balance_before::text, balance_after::text, reason,
            inbox_event_id::text, created_at::text
       FROM ledger_entries WHERE id <= ${upToId} ORDER BY id`.execute(db);
  const hash = createHash('sha256');
  for (const row of rows) hash.update(`${JSON.stringify(Object.values(row))}\n`);
  return { count: rows.length, hash: hash.digest('hex') };
}

export async function ledgerCheckpoint(db: Kysely<DB>): Promise<LedgerCheckpoint> {
  const { rows } = await sql<{ max: string | null }>`SELECT max(id)::text AS max FROM ledger_entries`.execute(db);
  const maxId = Number(rows[0]?.max ?? 0);
  return { maxId, ...(await ledgerHash(db, maxId)) };
}

/**
 * Waits until nothing is in flight: no inbox row received/processing, no studio request
 * received/processing, no installment processing or due and not yet claimed, no confirmation
 * email or app webhook message pending or processing. Returns what was still in flight at the deadline (empty when
 * settled).
 */
export async function settle(
  db: Kysely<DB>,
  timeoutMs: number,
  /** `effects`: all but the app webhook messages (a scenario waiting for its inbox to drain while workers still die). */
  what: 'everything' | 'effects' = 'everything',
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let pending: string[] = [];
  for (;;) {
    try {
      const { rows } = await sql<{ what: string; count: number }>`
        SELECT 'inbox ' || status AS what, count(*)::int AS count FROM inbox_events
         WHERE status IN ('received', 'processing') GROUP BY status
        UNION ALL
        SELECT 'studio ' || status, count(*)::int FROM studio_requests
         WHERE status IN ('received', 'processing') GROUP BY status
        UNION ALL
        SELECT 'installment processing', count(*)::int FROM stripe_installments
         WHERE status = 'processing'
        UNION ALL
        SELECT 'installment due', count(*)::int FROM stripe_installments
         WHERE status = 'scheduled' AND due_at <= now()
        UNION ALL
        SELECT 'email ' || status, count(*)::int FROM email_outbox
         WHERE status IN ('pending', 'processing') GROUP BY status
        UNION ALL
        SELECT 'app webhook ' || status, count(*)::int FROM app_webhook_messages
         WHERE status IN ('pending', 'processing') AND ${what === 'everything'} GROUP BY status`.execute(db);
      pending = rows.filter((row) => row.count > 0).map((row) => `${row.count} ${row.what}`);
      if (pending.length === 0) return [];
    } catch (error) {
      pending = [`database unreadable: ${String(error)}`];
    }
    if (Date.now() > deadline) return pending;
    await sleep(250);
  }
}

/** How a worker stopped for the checks (`ChaosCluster.quiesce`). */
export interface QuietStop {
  name: string;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  ms: number;
}

/**
 * Settles (`settle`, everything), then stops every worker cleanly (`cluster.quiesce`) and looks
 * again: what a worker wrote between the settle and its stop (its loops run on their own: a lot
 * that came due, a hold that lapsed) is still in flight with nobody to deliver it, so the workers
 * are woken, the cluster settles again, and they are stopped again, up to `rounds` times. Ends
 * with the workers stopped (`cluster.wake()` starts them) and what was still in flight (empty:
 * settled and quiet: nothing can write while the checks read, and nothing acknowledged was held
 * back by the stop, as a clean stop commits or rolls back what it was doing).
 */
export async function settleAndQuiesce(
  cluster: Pick<ChaosCluster, 'db' | 'quiesce' | 'wake'>,
  timeoutMs: number,
  rounds = 3,
): Promise<{ pending: string[]; stops: QuietStop[]; rounds: number }> {
  const deadline = Date.now() + timeoutMs;
  const stops: QuietStop[] = [];
  let pending: string[] = [];
  for (let round = 1; ; round += 1) {
    pending = await settle(cluster.db, Math.max(0, deadline - Date.now()));
    stops.push(...(await cluster.quiesce()));
    if (pending.length > 0) return { pending, stops, rounds: round };
    pending = await settle(cluster.db, 0);
    if (pending.length === 0 || round >= rounds) return { pending, stops, rounds: round };
    await cluster.wake();
  }
}

export interface InvariantInput {
  db: Kysely<DB>;
  /** Events some delivery of which was answered 200. */
  accepted: SimulatedEvent[];
  /** The previous checkpoint (ledger rows must be unchanged). */
  checkpoint: LedgerCheckpoint;
  /** The model's balance per user, for the users this scenario owns. */
  expectedBalances: Map<string, number>;
  /** Inbox events the model expects to park (provider:id); any other parked row is a violation. */
  expectedParked?: Set<string>;
  /** The model's final plans and installments (scenarios with subscriptions). */
  plans?: PlanModel;
}

/** A Stripe subscription as the model expects Tally to hold it: Stripe's final state. */
export interface ExpectedStripeSubscription {
  userId: string;
  status: string;
  planId: string | null;
  interval: 'month' | 'year' | null;
  /** Invoices of an annual price: each schedules exactly eleven installments. */
  annualInvoices: string[];
}

/** Stripe statuses that void the installments not yet due (save-stripe-subscription). */
export const endedStripeStatuses = new Set(['canceled', 'incomplete_expired']);

/**
 * The model of final plans: Stripe subscriptions (Stripe's final state), RevenueCat plans
 * (RevenueCat's final state), and every installment the scenario made due with the status it
 * had at that instant (read in the same UPDATE … RETURNING, so no race with a void is possible):
 * made due while `scheduled` ⇒ it must end `granted`; made due while `void` ⇒ it must stay `void`;
 * never made due ⇒ `void` when its subscription ended, else still `scheduled`.
 */
export class PlanModel {
  readonly stripeSubscriptions = new Map<string, ExpectedStripeSubscription>();
  /** Installment id → its status at the moment the scenario made it due. */
  readonly installmentsMadeDue = new Map<string, string>();
  /** RevenueCat user → the active plan RevenueCat finally reports, or null (none active). */
  readonly revenueCatPlans = new Map<string, string | null>();

  /** Installments the model expects granted (made due while scheduled). */
  grantedInstallments(): string[] {
    return [...this.installmentsMadeDue].filter(([, status]) => status === 'scheduled').map(([id]) => id);
  }
}

async function checkPlans(db: Kysely<DB>, plans: PlanModel, fail: (invariant: string, detail: string) => void) {
  const subscriptionIds = [...plans.stripeSubscriptions.keys()];
  if (subscriptionIds.length > 0) {
    const rows = await db
      .selectFrom('stripe_subscriptions')
      .select(['subscription_id', 'user_id', 'status', 'plan_id', 'billing_interval'])
      .where('subscription_id', 'in', subscriptionIds)
      .execute();
    const byId = new Map(rows.map((row) => [row.subscription_id, row]));
    for (const [id, expected] of plans.stripeSubscriptions) {
      const row = byId.get(id);
      const actual = row ? `${row.user_id} ${row.status} ${row.plan_id} ${row.billing_interval}` : 'missing';
      const wanted = `${expected.userId} ${expected.status} ${expected.planId} ${expected.interval}`;
      if (actual !== wanted) fail('plans = model', `stripe ${id}: ${actual}, model (Stripe's final state) ${wanted}`);
    }
    const installments = await db
      .selectFrom('stripe_installments')
      .select(['id', 'subscription_id', 'invoice_id', 'sequence', 'status'])
      .where('subscription_id', 'in', subscriptionIds)
      .execute();
    for (const [id, expected] of plans.stripeSubscriptions) {
      for (const invoiceId of expected.annualInvoices) {
        const sequences = installments
          .filter((row) => row.invoice_id === invoiceId)
          .map((row) => row.sequence)
          .sort((a, b) => a - b);
        if (sequences.join(',') !== '1,2,3,4,5,6,7,8,9,10,11') {
          fail('installments = model', `${id} invoice ${invoiceId}: installments [${sequences}], model 1…11`);
        }
      }
      const unexpected = installments.filter(
        (row) => row.subscription_id === id && !expected.annualInvoices.includes(row.invoice_id),
      );
      if (unexpected.length > 0) fail('installments = model', `${id}: installments of a monthly invoice`);
    }
    for (const row of installments) {
      const subscription = plans.stripeSubscriptions.get(row.subscription_id);
      const atDue = plans.installmentsMadeDue.get(String(row.id));
      const wanted =
        atDue === 'scheduled'
          ? 'granted'
          : atDue !== undefined
            ? atDue
            : subscription && endedStripeStatuses.has(subscription.status)
              ? 'void'
              : 'scheduled';
      if (row.status !== wanted) {
        fail(
          'installments = model',
          `installment ${row.id} (${row.subscription_id} #${row.sequence}) is ${row.status}, model ${wanted}${
            atDue === undefined ? ' (never due)' : ` (made due while ${atDue})`
          }`,
        );
      }
    }
  }
  const rcUsers = [...plans.revenueCatPlans.keys()];
  if (rcUsers.length > 0) {
    const rows = await db
      .selectFrom('subscriptions')
      .select(['user_id', 'status', 'plan_id'])
      .where('source', '=', 'revenuecat')
      .where('user_id', 'in', rcUsers)
      .execute();
    const byUser = new Map(rows.map((row) => [row.user_id, row]));
    for (const [user, planId] of plans.revenueCatPlans) {
      const row = byUser.get(user);
      const active = row?.status === 'active' ? row.plan_id : null;
      if (active !== planId) {
        fail(
          'plans = model',
          `revenuecat ${user}: ${row ? `${row.status} ${row.plan_id}` : 'no row'}, model ${planId ?? 'inactive'}`,
        );
      }
    }
  }
}

export interface InvariantResult {
  violations: Violation[];
  /** Accepted events with no inbox row, plus users whose balance is short of the model. */
  lost: number;
  /** Users whose balance exceeds the model (an effect applied twice). */
  appliedTwice: number;
  parked: number;
  checkpoint: LedgerCheckpoint;
}

/** Checks every invariant of the issue against the database as it is now. */
export async function checkInvariants(input: InvariantInput): Promise<InvariantResult> {
  const { db } = input;
  const violations: Violation[] = [];
  const fail = (invariant: string, detail: string) => violations.push({ invariant, detail });

  // 1. Every request answered 200 has its inbox row.
  const inbox = await db
    .selectFrom('inbox_events')
    .select(['id', 'provider', 'provider_event_id', 'status', 'outcome_code', 'last_error'])
    .execute();
  const inboxByKey = new Map(inbox.map((row) => [`${row.provider}:${row.provider_event_id}`, row]));
  let lost = 0;
  for (const event of input.accepted) {
    if (!inboxByKey.has(`${event.provider}:${event.id}`)) {
      lost += 1;
      if (lost <= 5) fail('answered 200 ⇒ inbox row', `${event.provider} ${event.id} was answered 200 and has no row`);
    }
  }
  if (lost > 5) fail('answered 200 ⇒ inbox row', `${lost} accepted events have no row in all`);

  // 2. Every inbox row ends processed, ignored or parked with its error.
  let parked = 0;
  for (const row of inbox) {
    const key = `${row.provider}:${row.provider_event_id}`;
    if (row.status === 'received' || row.status === 'processing') {
      fail('inbox rows finish', `${key} is stuck in ${row.status}`);
    } else if (row.status === 'failed') {
      parked += 1;
      if (!row.outcome_code || !row.last_error) fail('parked rows carry their error', `${key} parked without an error`);
      if (!input.expectedParked?.has(key)) {
        fail('no unexpected parking', `${key} parked: ${row.outcome_code}: ${row.last_error?.slice(0, 200)}`);
      }
    }
  }

  // 3. Each ledger reference appears once.
  const { rows: duplicateReferences } = await sql<{ reference: string; count: number }>`
    SELECT reference, count(*)::int AS count FROM ledger_entries GROUP BY reference HAVING count(*) > 1`.execute(db);
  for (const row of duplicateReferences) fail('references unique', `${row.reference} appears ${row.count} times`);

  // 4. Each wallet's balance equals the sum of its ledger rows; the chain of balances is
  // unbroken (balance_before = the previous balance_after) and never below zero.
  const { rows: walletMismatches } = await sql<{ user_id: string; balance: string; sum: string }>`
    SELECT w.user_id, w.balance::text, coalesce(sum(l.amount), 0)::text AS sum
      FROM wallets w LEFT JOIN ledger_entries l ON l.user_id = w.user_id
     GROUP BY w.user_id, w.balance HAVING w.balance <> coalesce(sum(l.amount), 0)`.execute(db);
  for (const row of walletMismatches) {
    fail('balance = Σ ledger', `${row.user_id}: balance ${row.balance}, ledger sums to ${row.sum}`);
  }
  const { rows: brokenChain } = await sql<{ user_id: string; id: string; balance_before: string; previous: string }>`
    SELECT user_id, id::text, balance_before::text, previous::text FROM (
      SELECT user_id, id, balance_before,
             coalesce(lag(balance_after) OVER (PARTITION BY user_id ORDER BY id), 0) AS previous
        FROM ledger_entries) chain
     WHERE balance_before <> previous LIMIT 5`.execute(db);
  for (const row of brokenChain) {
    fail('ledger chain', `${row.user_id} entry ${row.id}: balance_before ${row.balance_before} ≠ ${row.previous}`);
  }
  const { rows: negative } = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM ledger_entries WHERE balance_after < 0 OR balance_before < 0`.execute(db);
  if ((negative[0]?.count ?? 0) > 0) fail('never below zero', `${negative[0]?.count} ledger rows below zero`);

  // 5. Ledger rows were never changed: the rows of the last checkpoint hash the same.
  const again = await ledgerHash(db, input.checkpoint.maxId);
  if (again.count !== input.checkpoint.count || again.hash !== input.checkpoint.hash) {
    fail(
      'ledger append-only',
      `rows up to id ${input.checkpoint.maxId} changed (${input.checkpoint.count} → ${again.count} rows)`,
    );
  }

  // 6. Every studio request ends completed, or failed and (when charged) refunded exactly once
  // for exactly its debit; a completed one is never refunded.
  const { rows: studio } = await sql<{
    public_id: string;
    status: string;
    tokens_charged: number;
    refunded: boolean;
    debit: string | null;
    refund: string | null;
  }>`SELECT s.public_id::text, s.status, s.tokens_charged, s.refunded_at IS NOT NULL AS refunded,
            d.amount::text AS debit, r.amount::text AS refund
       FROM studio_requests s
       LEFT JOIN ledger_entries d ON d.reference = 'studio:' || s.public_id || ':debit'
       LEFT JOIN ledger_entries r ON r.reference = 'studio:' || s.public_id || ':refund'`.execute(db);
  for (const row of studio) {
    const id = row.public_id;
    if (row.status !== 'completed' && row.status !== 'failed') fail('studio settles', `${id} is ${row.status}`);
    const charged = row.tokens_charged > 0;
    if (charged !== (row.debit !== null))
      fail('studio debit', `${id}: charged ${row.tokens_charged}, debit ${row.debit}`);
    if (row.status === 'completed' && row.refund !== null) fail('studio completed ⇒ no refund', `${id} refunded`);
    if (row.status === 'failed' && charged) {
      if (row.refund === null || Number(row.refund) !== -Number(row.debit)) {
        fail('studio failed ⇒ refunded once', `${id}: debit ${row.debit}, refund ${row.refund}`);
      }
      if (!row.refunded) fail('studio failed ⇒ refunded once', `${id}: refunded_at not set`);
    }
    if (row.status === 'failed' && !charged && row.refund !== null) fail('free ⇒ no refund', `${id} refunded`);
  }

  // 7. Every installment granted at most once, and granted ⇔ its ledger row.
  const { rows: installments } = await sql<{ id: string; status: string; rows: number }>`
    SELECT i.id::text, i.status, count(l.id)::int AS rows
      FROM stripe_installments i
      LEFT JOIN ledger_entries l ON l.reference = 'stripe:installment:' || i.id
     GROUP BY i.id, i.status`.execute(db);
  for (const row of installments) {
    if (row.rows > 1) fail('installment granted once', `installment ${row.id} has ${row.rows} grants`);
    if ((row.status === 'granted') !== (row.rows === 1)) {
      fail('installment granted ⇔ ledger row', `installment ${row.id} is ${row.status} with ${row.rows} grants`);
    }
  }

  // 7b. Confirmation emails: at most one per payment, none left pending or processing, and a
  // payment's email goes to the address the payment carries.
  const { rows: emailDuplicates } = await sql<{ payment_id: string; count: number }>`
    SELECT payment_id::text, count(*)::int AS count FROM email_outbox GROUP BY payment_id HAVING count(*) > 1`.execute(
    db,
  );
  for (const row of emailDuplicates) fail('one email per payment', `payment ${row.payment_id} has ${row.count} emails`);
  const { rows: emailsInFlight } = await sql<{ id: string; status: string; attempts: number }>`
    SELECT id::text, status, attempts FROM email_outbox WHERE status IN ('pending', 'processing') LIMIT 5`.execute(db);
  for (const row of emailsInFlight) {
    fail('emails settle', `email ${row.id} is ${row.status} after ${row.attempts} attempts`);
  }
  const { rows: emailMismatches } = await sql<{ id: string }>`
    SELECT e.id::text FROM email_outbox e JOIN payments p ON p.id = e.payment_id
     WHERE e.user_id <> p.user_id OR e.to_address IS DISTINCT FROM p.customer_email LIMIT 5`.execute(db);
  for (const row of emailMismatches) fail('email = its payment', `email ${row.id} differs from its payment`);

  // 7c. The lots and holds (docs/lots.md, docs/holds.md). `ledger verify` clean: every wallet's
  // balance is the sum of its lots' remaining, every lot's remaining within 0 and its amount,
  // every debit drew exactly its amount from lots.
  const verification = await verifyLedger(db, { limit: 5 });
  for (const discrepancy of verification.discrepancies) {
    fail(`ledger verify: ${discrepancy.problem}`, `${discrepancy.userId}: ${discrepancy.detail}`);
  }
  // No hold captured twice: a captured hold has exactly one `hold:{id}:capture`, of what it
  // captured (at most its amount: the table's check), and no other hold has one.
  const { rows: captures } = await sql<{
    id: string;
    status: string;
    captured: string | null;
    entries: number;
    debited: string | null;
  }>`
    SELECT h.id, h.status, h.captured::text, count(l.id)::int AS entries, (-sum(l.amount))::text AS debited
      FROM holds h LEFT JOIN ledger_entries l ON l.reference = 'hold:' || h.id || ':capture'
     GROUP BY h.id, h.status, h.captured
    HAVING count(l.id) <> (CASE WHEN h.status = 'captured' THEN 1 ELSE 0 END)
        OR (h.status = 'captured' AND (-sum(l.amount)) IS DISTINCT FROM h.captured)
     LIMIT 5`.execute(db);
  for (const row of captures) {
    fail(
      'a hold captured once, for what it captured',
      `${row.id} is ${row.status} (captured ${row.captured}) with ${row.entries} capture entries debiting ${row.debited}`,
    );
  }
  // A capture draws only from the lots its hold reserved, at most what it reserved of each.
  const { rows: strayDraws } = await sql<{ id: string; lot_id: string; drawn: string; reserved: string | null }>`
    SELECT h.id, d.lot_id::text, d.amount::text AS drawn, hl.amount::text AS reserved
      FROM holds h
      JOIN ledger_entries l ON l.reference = 'hold:' || h.id || ':capture'
      JOIN ledger_draws d ON d.ledger_entry_id = l.id
      LEFT JOIN hold_lots hl ON hl.hold_id = h.id AND hl.lot_id = d.lot_id
     WHERE hl.amount IS NULL OR d.amount > hl.amount
     LIMIT 5`.execute(db);
  for (const row of strayDraws) {
    fail(
      'a capture draws what its hold reserved',
      `${row.id} drew ${row.drawn} from lot ${row.lot_id}, which it reserved ${row.reserved ?? 'nothing'} of`,
    );
  }
  // No held token expired or taken back: every lot still has what the active holds reserve of it.
  const { rows: underHeld } = await sql<{ lot_id: string; remaining: string; reserved: string }>`
    SELECT c.id::text AS lot_id, c.remaining::text, sum(hl.amount)::text AS reserved
      FROM holds h JOIN hold_lots hl ON hl.hold_id = h.id JOIN credit_lots c ON c.id = hl.lot_id
     WHERE h.status = 'held' AND h.settled_at IS NULL AND h.expires_at > now()
     GROUP BY c.id, c.remaining HAVING c.remaining < sum(hl.amount)
     LIMIT 5`.execute(db);
  for (const row of underHeld) {
    fail('held tokens stay', `lot ${row.lot_id} has ${row.remaining} left, active holds reserve ${row.reserved} of it`);
  }
  // The same at every moment, not only at the end: no entry that took from a lot (a debit, a
  // take-back such as a chargeback or a refund, an expiry, another hold's capture) left it below
  // what the holds active at that entry reserve of it. A lot's remaining right after an entry is
  // its remaining now less what every later entry moved; a hold was active at entry E when it was
  // placed before E (its ledger_marker, read under the wallet lock, is below E's id), had not
  // lapsed by E's transaction time (what E's own read of the active holds used), and was not
  // captured by E or before it (its capture entry's id). Released holds are left out: the release
  // writes no entry, and its time does not say on which side of E's lock it ran.
  const { rows: heldTaken } = await sql<{
    entry_id: string;
    reference: string;
    lot_id: string;
    remaining_after: string;
    reserved: string;
  }>`
    WITH moves AS (
      SELECT d.lot_id, d.ledger_entry_id AS entry_id, e.reference, e.created_at,
             CASE WHEN e.amount < 0 THEN -d.amount ELSE d.amount END AS delta
        FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id),
    after AS (
      SELECT m.*, c.remaining - coalesce(sum(m.delta) OVER (
               PARTITION BY m.lot_id ORDER BY m.entry_id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
               AS remaining_after
        FROM moves m JOIN credit_lots c ON c.id = m.lot_id)
    SELECT a.entry_id::text, a.reference, a.lot_id::text, a.remaining_after::text, r.reserved::text
      FROM after a
      CROSS JOIN LATERAL (
        SELECT coalesce(sum(hl.amount), 0) AS reserved
          FROM hold_lots hl JOIN holds h ON h.id = hl.hold_id
         WHERE hl.lot_id = a.lot_id
           AND h.status <> 'released'
           AND h.ledger_marker < a.entry_id
           AND h.expires_at > a.created_at
           AND (h.ledger_reference IS NULL
                OR (SELECT min(c.id) FROM ledger_entries c WHERE c.reference = h.ledger_reference) > a.entry_id)) r
     WHERE a.delta < 0 AND a.remaining_after < r.reserved
     ORDER BY a.entry_id
     LIMIT 5`.execute(db);
  for (const row of heldTaken) {
    fail(
      'held tokens never taken',
      `${row.reference} (entry ${row.entry_id}) left lot ${row.lot_id} with ${row.remaining_after}, the holds active then reserved ${row.reserved} of it`,
    );
  }

  // 8. Final balances equal the model's.
  let appliedTwice = 0;
  const users = [...input.expectedBalances.keys()];
  const wallets =
    users.length === 0
      ? []
      : await db.selectFrom('wallets').select(['user_id', 'balance']).where('user_id', 'in', users).execute();
  const actual = new Map(wallets.map((wallet) => [wallet.user_id, Number(wallet.balance)]));
  for (const [userId, expected] of input.expectedBalances) {
    const balance = actual.get(userId) ?? 0;
    if (balance !== expected) {
      fail('balances = model', `${userId}: balance ${balance}, model ${expected}`);
      if (balance > expected) appliedTwice += 1;
      else lost += 1;
    }
  }

  // 8b. Final plans and installments equal the model's (scenarios with subscriptions).
  if (input.plans) await checkPlans(db, input.plans, fail);

  return { violations, lost, appliedTwice, parked, checkpoint: await ledgerCheckpoint(db) };
}
