import {
  DEFAULT_RECONCILE_WINDOW_DAYS,
  inboxRelaySource,
  plainLots,
  postLedgerEntry,
  reconcileStripe,
} from '@tally/billing-core';
import { handOffRows } from '@tally/platform';
import { sql } from 'kysely';
import { ledgerOf } from '../../support/ledger';
import { type Json, readJson, signStripe } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';
import { suiteStackWithFakeStripe } from '../../support/suite';

describe('Stripe reconciliation: backfill from the Events API and money rows checked against events', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: {} });

  /** A pack purchase Stripe knows about (listed by the Events API), as a body. */
  const packEvent = (userId: string, paymentIntentId: string) => {
    const body = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntentId, userId, customer: stripeId('cus') }),
    );
    fake.putEvent(JSON.parse(body));
    return { body, eventId: JSON.parse(body).id as string };
  };
  const processed = async (eventId: string) => {
    const row = await stack.finishedInboxRow('stripe', eventId);
    expect({ eventId, status: row.status }).toEqual({ eventId, status: 'processed' });
    return row;
  };
  const reconcile = async (body: unknown = {}) => {
    const response = await stack.apiRequest('/admin/reconcile/stripe', { method: 'POST', body });
    expect(response.status).toBe(200);
    return (await readJson(response)) as Json;
  };

  it('ingests an event Stripe has and the inbox lacks (marked backfill, then credited), and a second run finds nothing', async () => {
    // One event arrived as a webhook, one never did.
    const delivered = packEvent(stripeId('user'), stripeId('pi'));
    expect((await stack.postStripe(delivered.body, signStripe(delivered.body))).status).toBe(200);
    await processed(delivered.eventId);
    const lostUser = stripeId('user');
    const lostIntent = stripeId('pi');
    const lost = packEvent(lostUser, lostIntent);
    // An event of a type Tally does not handle is not backfilled.
    fake.putEvent({
      id: stripeId('evt'),
      object: 'event',
      type: 'customer.created',
      livemode: false,
      data: { object: {} },
    });

    const dryRun = await reconcile({ dryRun: true });
    expect(dryRun.missingEvents).toEqual([expect.objectContaining({ eventId: lost.eventId, result: 'would_ingest' })]);
    expect(await stack.inboxRows('stripe', lost.eventId)).toEqual([]);

    const first = await reconcile({ windowDays: 3 });
    expect(first).toMatchObject({
      ok: false,
      dryRun: false,
      windowDays: 3,
      stripeEvents: 2,
      truncated: false,
      eventsWithoutRows: [],
      ledgerRowsWithoutEvent: [],
    });
    expect(first.missingEvents).toEqual([
      expect.objectContaining({ eventId: lost.eventId, type: 'payment_intent.succeeded', result: 'ingested' }),
    ]);
    const row = await processed(lost.eventId);
    expect(row).toMatchObject({ source: 'backfill', outcome_code: 'credited', user_id: lostUser });
    expect(first.missingEvents[0].inboxEventId).toBe(row.id);
    const [delivieredRow] = await stack.inboxRows('stripe', delivered.eventId);
    expect(delivieredRow?.source).toBe('webhook');
    const ledger = await ledgerOf(stack.db, lostUser, ['user_id', 'reference', 'amount', 'inbox_event_id']);
    expect(ledger).toEqual([
      { user_id: lostUser, reference: `stripe:payment:${lostIntent}`, amount: 100, inbox_event_id: row.id },
    ]);

    const second = await reconcile();
    expect(second).toMatchObject({
      ok: true,
      stripeEvents: 2,
      missingEvents: [],
      eventsWithoutRows: [],
      ledgerRowsWithoutEvent: [],
    });
  });

  it('pages through the Events API (more than one page of 100)', async () => {
    const before = fake.requests.filter((request) => request.path === '/v1/events').length;
    for (let index = 0; index < 120; index += 1) {
      fake.putEvent({
        id: stripeId('evt'),
        object: 'event',
        type: 'charge.refunded',
        livemode: false,
        data: { object: { id: stripeId('ch'), object: 'charge', refunded: false } },
      });
    }
    const report = await reconcile({ dryRun: true });
    expect(report.missingEvents).toHaveLength(120);
    expect(fake.requests.filter((request) => request.path === '/v1/events').length - before).toBe(2);
    fake.events.splice(0, fake.events.length, ...fake.events.filter((event) => event.type !== 'charge.refunded'));
  });

  it('refuses a window beyond the 30 days Stripe keeps', async () => {
    const response = await stack.apiRequest('/admin/reconcile/stripe', { method: 'POST', body: { windowDays: 31 } });
    expect(response.status).toBe(400);
  });

  it('flags a processed event whose ledger row is missing, and a stripe ledger row no event accounts for (guard disabled on purpose)', async () => {
    const userId = stripeId('user');
    const paymentIntentId = stripeId('pi');
    const purchase = packEvent(userId, paymentIntentId);
    expect((await stack.postStripe(purchase.body, signStripe(purchase.body))).status).toBe(200);
    const row = await processed(purchase.eventId);

    // Only possible with the append-only guard off: this test database is thrown away afterwards.
    await sql`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only_trg`.execute(stack.db);
    await sql`DELETE FROM ledger_entries WHERE reference = ${`stripe:payment:${paymentIntentId}`}`.execute(stack.db);
    await sql`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only_trg`.execute(stack.db);
    // A Stripe-looking credit that no inbox event explains.
    const orphanInvoice = stripeId('in');
    await stack.transaction(async (uow) => {
      await uow.trx
        .insertInto('users')
        .values({ id: userId })
        .onConflict((oc) => oc.doNothing())
        .execute();
      return postLedgerEntry(uow, {
        userId,
        reference: `stripe:invoice:${orphanInvoice}`,
        amount: 5,
        reason: 'test',
        lots: plainLots(5),
      });
    });

    const report = await reconcileStripe(
      {
        db: stack.db,
        stripe: stack.ports.stripe as NonNullable<typeof stack.ports.stripe>,
        enqueue: (ids) => handOffRows(stack.queue, inboxRelaySource, stack.db, ids),
      },
      { windowDays: DEFAULT_RECONCILE_WINDOW_DAYS, ledgerGraceMs: 0 },
    );
    expect(report.ok).toBe(false);
    expect(report.missingEvents).toEqual([]);
    expect(report.eventsWithoutRows).toEqual([
      {
        inboxEventId: row.id,
        eventId: purchase.eventId,
        type: 'payment_intent.succeeded',
        outcomeCode: 'credited',
        missing: [`ledger entry stripe:payment:${paymentIntentId}`],
      },
    ]);
    expect(report.ledgerRowsWithoutEvent).toEqual([
      expect.objectContaining({ reference: `stripe:invoice:${orphanInvoice}`, userId, amount: 5 }),
    ]);
  });

  it('accounts for a stripe ledger row by its linked event, by an event naming its payment intent, or by one naming its invoice, and reports the row none names', async () => {
    const userId = stripeId('user');
    const [namedIntent, namedInvoice, linkedRefund, orphanIntent] = [
      stripeId('pi'),
      stripeId('in'),
      stripeId('re'),
      stripeId('pi'),
    ];
    // Finished inbox rows naming a payment intent or an invoice (stored as the inbox would, ignored).
    const storedEvent = async (column: 'provider_payment_intent_id' | 'provider_invoice_id', id: string) =>
      Number(
        (
          await sql<{ id: number }>`
            INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, ${sql.ref(column)},
                                      raw_body, status, outcome_code, processed_at)
            VALUES ('stripe', ${stripeId('evt')}, 'charge.refunded', false, 'sandbox', ${id}, '{}', 'ignored',
                    'not_a_token_pack', now())
            RETURNING id`.execute(stack.db)
        ).rows[0]?.id,
      );
    await storedEvent('provider_payment_intent_id', namedIntent);
    await storedEvent('provider_invoice_id', namedInvoice);
    // Linked by id to an event that names neither its reference's object.
    const linkedEventId = await storedEvent('provider_payment_intent_id', stripeId('pi'));
    await stack.transaction(async (uow) => {
      await uow.trx.insertInto('users').values({ id: userId }).execute();
      await postLedgerEntry(uow, {
        userId,
        reference: `stripe:payment:${namedIntent}`,
        amount: 5,
        reason: 'test',
        lots: plainLots(5),
      });
      await postLedgerEntry(uow, {
        userId,
        reference: `stripe:invoice:${namedInvoice}`,
        amount: 5,
        reason: 'test',
        lots: plainLots(5),
      });
      await postLedgerEntry(uow, {
        userId,
        reference: `stripe:refund:${linkedRefund}`,
        amount: -1,
        reason: 'test',
        inboxEventId: linkedEventId,
        lots: plainLots(-1),
      });
      await postLedgerEntry(uow, {
        userId,
        reference: `stripe:payment:${orphanIntent}`,
        amount: 5,
        reason: 'test',
        lots: plainLots(5),
      });
    });

    const report = await reconcileStripe(
      {
        db: stack.db,
        stripe: stack.ports.stripe as NonNullable<typeof stack.ports.stripe>,
        enqueue: (ids) => handOffRows(stack.queue, inboxRelaySource, stack.db, ids),
      },
      { windowDays: DEFAULT_RECONCILE_WINDOW_DAYS, ledgerGraceMs: 0, dryRun: true },
    );
    expect(report.ledgerRowsWithoutEvent.filter((row) => row.userId === userId).map((row) => row.reference)).toEqual([
      `stripe:payment:${orphanIntent}`,
    ]);
  });

  it('counts its window and the ledger grace period back from the clock it is given', async () => {
    const userId = stripeId('user');
    const orphanInvoice = stripeId('in');
    await stack.transaction(async (uow) => {
      await uow.trx.insertInto('users').values({ id: userId }).execute();
      return postLedgerEntry(uow, {
        userId,
        reference: `stripe:invoice:${orphanInvoice}`,
        amount: 3,
        reason: 'test',
        lots: plainLots(3),
      });
    });
    const deps = {
      db: stack.db,
      stripe: stack.ports.stripe as NonNullable<typeof stack.ports.stripe>,
      enqueue: (ids: number[]) => handOffRows(stack.queue, inboxRelaySource, stack.db, ids),
    };
    const orphan = expect.objectContaining({ reference: `stripe:invoice:${orphanInvoice}`, userId, amount: 3 });

    // By the system clock the row was just written: inside the 10-minute grace, not reported.
    const byNow = await reconcileStripe(deps, { windowDays: DEFAULT_RECONCILE_WINDOW_DAYS, dryRun: true });
    expect(byNow.ledgerRowsWithoutEvent).not.toContainEqual(orphan);

    // An hour later by the clock given, the same row is past the grace and reported.
    const later = new Date(Date.now() + 3_600_000);
    const report = await reconcileStripe(
      { ...deps, clock: { now: () => later } },
      { windowDays: DEFAULT_RECONCILE_WINDOW_DAYS, dryRun: true },
    );
    expect(report.windowStart).toBe(new Date(later.getTime() - 3 * 24 * 3_600_000).toISOString());
    expect(report.ledgerRowsWithoutEvent).toContainEqual(orphan);
  });
});
